//! Bash brace expansion of plain words (`a{b,c}d`, nested, `x{,}`), bounded in the number of
//! words it makes, and the sequences (`{1..3}`) it leaves to the caller to mark unknown.

/// Most fields one word may brace-expand into.
const MAX_BRACE_FIELDS: usize = 64;

/// Whether text holds a brace sequence bash may expand (`{1..3}`, `{a..c}`).
pub(super) fn sequence(text: &str) -> bool {
    text.match_indices('{').any(|(i, _)| text[i..].find('}').is_some_and(|j| text[i..i + j].contains("..")))
}

/// Bash brace expansion of `a{b,c}d` forms (sequences like `{1..3}` are left alone); `None`
/// when the word expands to more than `MAX_BRACE_FIELDS` words.
pub(super) fn brace_expand(word: &str) -> Option<Vec<String>> {
    let mut out = vec![word.to_string()];
    let mut i = 0;
    while i < out.len() {
        if out.len() > MAX_BRACE_FIELDS {
            return None;
        }
        match expand_first(&out[i]) {
            Some(parts) => {
                out.splice(i..=i, parts);
            }
            None => i += 1,
        }
    }
    Some(out)
}

fn expand_first(word: &str) -> Option<Vec<String>> {
    let bytes = word.as_bytes();
    for (open, _) in word.match_indices('{') {
        let mut depth = 0;
        let mut commas = Vec::new();
        for (j, &c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if commas.is_empty() {
                            break;
                        }
                        let (pre, post) = (&word[..open], &word[j + 1..]);
                        let mut bounds = vec![open];
                        bounds.extend(&commas);
                        bounds.push(j);
                        let alts = bounds.windows(2).map(|w| format!("{pre}{}{post}", &word[w[0] + 1..w[1]]));
                        return Some(alts.collect());
                    }
                }
                b',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::brace_expand;

    #[test]
    fn brace_expansion() {
        assert_eq!(brace_expand("{src,.git}").unwrap(), ["src", ".git"]);
        assert_eq!(brace_expand("r{m,}").unwrap(), ["rm", "r"]);
        assert_eq!(brace_expand("a{b,{c,d}}e").unwrap(), ["abe", "ace", "ade"]);
        assert_eq!(brace_expand("{1..3}").unwrap(), ["{1..3}"]);
        assert_eq!(brace_expand("x{a}").unwrap(), ["x{a}"]);
        let many = format!("{{{}}}", vec!["a"; 100].join(","));
        assert!(brace_expand(&many).is_none());
    }
}
