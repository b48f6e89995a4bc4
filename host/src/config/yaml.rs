//! Limits on the YAML text itself, checked before it is parsed: its size, and how deeply it nests.
//! The YAML parser spends time proportional to the nesting depth on every token (so a file of
//! 100 000 `[` took 37 s); a configuration never needs more than a handful of levels.

/// Largest configuration file.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// Deepest nesting of flow (`[`, `{`) and block (indentation, `- `) collections.
pub const MAX_DEPTH: usize = 32;

/// Checks that `text` nests at most [`MAX_DEPTH`] levels; the error gives the line.
pub fn check_depth(text: &str) -> Result<(), String> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    for (n, line) in text.lines().enumerate() {
        let content = line.trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if flow == 0 {
            let mut col = line.len() - content.len();
            let mut rest = content;
            // Block sequences may open on one line: `- - - x`.
            loop {
                while indents.last().is_some_and(|&i| i > col) {
                    indents.pop();
                }
                if indents.last() != Some(&col) {
                    indents.push(col);
                }
                match rest.strip_prefix("- ") {
                    Some(r) => {
                        col += 2 + (r.len() - r.trim_start_matches(' ').len());
                        rest = r.trim_start_matches(' ');
                    }
                    None => break,
                }
            }
        }
        flow = flow_depth_after(content, flow);
        let depth = indents.len() + flow;
        if depth > MAX_DEPTH {
            return Err(format!("line {}: nested {depth} levels deep; the maximum is {MAX_DEPTH}", n + 1));
        }
    }
    Ok(())
}

/// The flow nesting after `line`, starting at `depth`: brackets outside quotes and comments.
fn flow_depth_after(line: &str, mut depth: usize) -> usize {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('"'), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if prev == ' ' => break,
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        prev = c;
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_configs_pass() {
        check_depth(crate::config::DEFAULT_YAML).unwrap();
        check_depth("ports:\n  - {name: a, driver: null, policy: {plugin: x, params: {k: \"[[[[\"}}}\n").unwrap();
    }

    #[test]
    fn deep_flow_and_block_nesting_are_refused_fast() {
        let t = std::time::Instant::now();
        let flow = format!("ports: {}", "[".repeat(100_000));
        assert!(check_depth(&flow).unwrap_err().contains("line 1: nested 100001 levels deep; the maximum is 32"));
        let block: String = (0..100).map(|i| format!("{}- \n", " ".repeat(2 * i))).collect();
        assert!(check_depth(&block).unwrap_err().contains("nested 33 levels"));
        let inline = format!("{}x\n", "- ".repeat(100));
        assert!(check_depth(&inline).is_err());
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
    }
}
