//! `find … -exec CMD {} +`: the command each action runs, with `{}` read as the paths found
//! when the expression names them (`find . -name build -type d -exec rm -rf {} +`).

use super::Field;
use super::nested::{Nested, NestedKind};
use super::unwrap::Unwrapped;

pub(super) fn find_exec(words: &[Field], u: &mut Unwrapped) {
    let found = found_by_name(words);
    let mut i = 1;
    while i < words.len() {
        let w = words[i].text.as_str();
        if matches!(w, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end =
                words[i + 1..].iter().position(|f| f.text == ";" || f.text == "+").map_or(words.len(), |n| i + 1 + n);
            if end > i + 1 {
                let mut argv = words[i + 1..end].to_vec();
                if let Some(name) = &found {
                    // `find . -name build -type d -exec rm -rf {} +`: each path found ends in
                    // `build`, which is what `{}` reads as.
                    argv.iter_mut().filter(|f| f.text == "{}").for_each(|f| *f = Field::lit(format!("*/{name}")));
                }
                u.nested.push(Nested { origin: format!("find {w}"), kind: NestedKind::Argv(argv) });
            }
            i = end;
        }
        i += 1;
    }
}

/// The one name every path a find expression selects has, when the expression before the
/// first action is only start paths, `-name NAME`, `-type`, `-prune`, `-maxdepth`, `-mindepth`.
fn found_by_name(words: &[Field]) -> Option<String> {
    let mut i = 1;
    while words.get(i).is_some_and(|f| !f.text.starts_with('-')) {
        i += 1;
    }
    let mut name = None;
    while let Some(w) = words.get(i).map(|f| f.text.as_str()) {
        match w {
            "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete" => break,
            "-name" if name.is_none() => {
                let value = words.get(i + 1).filter(|f| !f.dynamic)?;
                let plain = value.text.chars().all(|c| c.is_ascii_alphanumeric() || "_.*-".contains(c));
                if !plain || value.text.starts_with('.') && value.text.len() < 3 {
                    return None;
                }
                name = Some(value.text.clone());
                i += 2;
            }
            "-type" | "-maxdepth" | "-mindepth" => i += 2,
            "-prune" => i += 1,
            _ => return None,
        }
    }
    name
}
