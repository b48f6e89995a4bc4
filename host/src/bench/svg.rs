//! The bench's chart: Mpps per path per engine, and the plugin/native ratio across burst sizes, as a
//! plain SVG file (no dependencies; any browser shows it).

use super::{BenchPath, Cell};
use std::fmt::Write;
use std::path::Path;

const W: f64 = 900.0;
const H: f64 = 340.0;
const PAD: f64 = 60.0;
/// Right end of the plot area; the legend is to its right.
const RIGHT: f64 = W - 190.0;
const COLORS: [&str; 4] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"];
const PATHS: [BenchPath; 4] = [BenchPath::Native, BenchPath::Plugin, BenchPath::PluginSticky, BenchPath::Wasm];

/// Writes the two charts to `path`.
pub fn write(path: &Path, cells: &[Cell]) -> anyhow::Result<()> {
    let Some(first) = cells.first() else { anyhow::bail!("--svg: no cells to draw") };
    let size = cells.iter().map(|c| c.size).min().unwrap_or(first.size);
    let simd = cells.iter().map(|c| c.simd).max_by_key(|s| s.variant()).unwrap_or(first.simd);
    let burst = if cells.iter().any(|c| c.burst == 32) { 32 } else { first.burst };
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{}" font-family="sans-serif" font-size="12">"#,
        2.0 * H + 40.0
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    bars(&mut out, cells, size, burst, simd);
    ratios(&mut out, cells, size, simd);
    out.push_str("</svg>\n");
    std::fs::write(path, out).map_err(|e| anyhow::anyhow!("--svg {}: {e}", path.display()))
}

fn axis(out: &mut String, top: f64, max: f64, label: &str, fmt: impl Fn(f64) -> String) {
    let (x0, y0, y1) = (PAD, top + H - 40.0, top + 40.0);
    let _ = writeln!(out, r#"<line x1="{x0}" y1="{y0}" x2="{}" y2="{y0}" stroke="black"/>"#, RIGHT);
    let _ = writeln!(out, r#"<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="black"/>"#);
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let y = y0 - (y0 - y1) * i as f64 / 4.0;
        let _ = writeln!(out, r##"<line x1="{x0}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/>"##, RIGHT);
        let _ = writeln!(out, r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#, x0 - 5.0, y + 4.0, fmt(v));
    }
    let _ = writeln!(
        out,
        r#"<text x="15" y="{}" transform="rotate(-90 15 {})" text-anchor="middle">{label}</text>"#,
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0
    );
}

fn legend(out: &mut String, top: f64, names: &[(String, &str)]) {
    for (i, (name, color)) in names.iter().enumerate() {
        let (x, y) = (RIGHT + 15.0, top + 45.0 + i as f64 * 18.0);
        let _ = writeln!(out, r#"<rect x="{x}" y="{y}" width="12" height="12" fill="{color}"/>"#);
        let _ = writeln!(out, r#"<text x="{}" y="{}">{name}</text>"#, x + 16.0, y + 10.0);
    }
}

fn bars(out: &mut String, cells: &[Cell], size: usize, burst: usize, simd: crate::simd::Simd) {
    let top = 10.0;
    let mut engines: Vec<&str> = Vec::new();
    for c in cells {
        if !engines.contains(&c.engine.as_str()) {
            engines.push(&c.engine);
        }
    }
    let pick = |e: &str, p: BenchPath| {
        cells.iter().find(|c| c.engine == e && c.path == p && c.size == size && c.burst == burst && c.simd == simd)
    };
    let max = cells.iter().map(|c| c.median()).fold(1.0, f64::max) * 1.1;
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">Mpps per path and engine ({size} B frames, burst {burst}, {simd}, one lcore)</text>"#,
        W / 2.0,
        top + 20.0
    );
    axis(out, top, max, "Mpps", |v| format!("{v:.0}"));
    let (y0, y1) = (top + H - 40.0, top + 40.0);
    let group = (RIGHT - PAD - 10.0) / engines.len().max(1) as f64;
    for (i, e) in engines.iter().enumerate() {
        let gx = PAD + 10.0 + i as f64 * group;
        let bw = (group - 20.0) / PATHS.len() as f64;
        for (j, p) in PATHS.iter().enumerate() {
            let Some(c) = pick(e, *p) else { continue };
            let h = (y0 - y1) * c.median() / max;
            let x = gx + j as f64 * bw;
            let _ = writeln!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{e} {}: {:.1} Mpps</title></rect>"#,
                y0 - h,
                bw - 2.0,
                COLORS[j],
                p.name(),
                c.median()
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{e}</text>"#,
            gx + (group - 20.0) / 2.0,
            y0 + 15.0
        );
    }
    let names: Vec<_> = PATHS.iter().zip(COLORS).map(|(p, c)| (p.name().to_string(), c)).collect();
    legend(out, top, &names);
}

fn ratios(out: &mut String, cells: &[Cell], size: usize, simd: crate::simd::Simd) {
    let top = H + 30.0;
    let mut bursts: Vec<usize> = cells.iter().map(|c| c.burst).collect();
    bursts.sort_unstable();
    bursts.dedup();
    let mut series: Vec<(String, Vec<(usize, f64)>)> = Vec::new();
    for c in cells
        .iter()
        .filter(|c| c.size == size && c.simd == simd && matches!(c.path, BenchPath::Plugin | BenchPath::PluginSticky))
    {
        let Some(r) = c.ratio() else { continue };
        let name = format!("{} {}", c.engine, c.path.name());
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push((c.burst, r)),
            None => series.push((name, vec![(c.burst, r)])),
        }
    }
    let top_ratio = series.iter().flat_map(|(_, p)| p.iter().map(|x| x.1)).fold(1.2, f64::max) * 1.05;
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">plugin / native ratio across burst sizes ({size} B frames, {simd})</text>"#,
        W / 2.0,
        top + 20.0
    );
    axis(out, top, top_ratio, "x native", |v| format!("{v:.2}"));
    let (y0, y1) = (top + H - 40.0, top + 40.0);
    let x_of = |b: usize| {
        let i = bursts.iter().position(|&x| x == b).unwrap_or(0) as f64;
        PAD + 40.0 + i * (RIGHT - PAD - 80.0) / (bursts.len().max(2) - 1) as f64
    };
    let y_of = |r: f64| y0 - (y0 - y1) * r / top_ratio;
    let _ = writeln!(
        out,
        r#"<line x1="{PAD}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="black" stroke-dasharray="4 3"/>"#,
        y_of(1.0),
        RIGHT,
        y_of(1.0)
    );
    for &b in &bursts {
        let _ = writeln!(out, r#"<text x="{:.1}" y="{}" text-anchor="middle">burst {b}</text>"#, x_of(b), y0 + 15.0);
    }
    let palette =
        ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
    let mut names = Vec::new();
    for (i, (name, mut pts)) in series.into_iter().enumerate() {
        pts.sort_by_key(|p| p.0);
        let color = palette[i % palette.len()];
        let d: Vec<String> = pts.iter().map(|&(b, r)| format!("{:.1},{:.1}", x_of(b), y_of(r))).collect();
        let _ = writeln!(out, r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#, d.join(" "));
        for &(b, r) in &pts {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{name} burst {b}: {r:.3}</title></circle>"#,
                x_of(b),
                y_of(r)
            );
        }
        names.push((name, color));
    }
    legend(out, top, &names);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::Simd;

    fn cell(engine: &str, path: BenchPath, burst: usize, mpps: f64, ratio: f64) -> Cell {
        Cell {
            engine: engine.into(),
            path,
            simd: Simd::scalar(),
            size: 64,
            burst,
            mpps: vec![mpps],
            ratios: vec![ratio],
            baseline: Some(BenchPath::Native),
        }
    }

    #[test]
    fn the_chart_has_a_bar_per_cell_and_a_line_per_plugin_path() {
        let cells = vec![
            cell("io", BenchPath::Native, 32, 100.0, 1.0),
            cell("io", BenchPath::Plugin, 32, 90.0, 0.9),
            cell("io", BenchPath::Native, 64, 110.0, 1.0),
            cell("io", BenchPath::Plugin, 64, 105.0, 0.95),
        ];
        let path = std::env::temp_dir().join(format!("wasmdp-svg-{}.svg", std::process::id()));
        write(&path, &cells).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<title>io native: 100.0 Mpps</title>").count(), 1);
        assert_eq!(svg.matches("<polyline").count(), 1, "one series: io plugin over two bursts");
        assert!(svg.contains("io plugin burst 64: 0.950"));
    }
}
