//! Every variant against the scalar reference. (Filled in with the SIMD variants.)
