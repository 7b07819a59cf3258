//! `xargs` and `parallel` build commands from data: their input lines (or `:::` arguments)
//! are put into the command (`-I{}` replaces, otherwise they are appended). Where that data is
//! known (`echo 'rm -rf ~' | xargs -I{} sh -c '{}'`), each command built is read; where it is
//! not, a command whose program or script comes from it is only known when it runs.

use super::analyze::Analyzer;
use super::nested::{Nested, NestedKind};
use super::{Field, IssueKind, basename, catalog};

/// Most commands built from known data that are read.
const MAX_BUILT: usize = 16;

impl Analyzer {
    /// Reads the commands `xargs …` or `parallel …` builds from `input` (what it reads); true
    /// when every command it runs was read that way, so its bare template never runs as is.
    pub(super) fn built_commands(&mut self, fields: &[Field], input: Option<&Field>) -> bool {
        let prog = basename(&fields[0].text);
        // Their options are the catalogue's (`programs/runners.toml`).
        let Some(entry) = catalog::find(prog) else { return false };
        let (template, items, replace) = match prog {
            "xargs" => {
                let r = entry.read(fields, 1);
                let (i, opts) = (r.end, r.given);
                let value = |names: &[&str]| opts.iter().rev().find(|(n, _)| names.contains(&n.as_str()));
                let replace = match value(&["-I", "-i", "--replace"]) {
                    Some((_, Some(r))) => Some(r.to_string()),
                    Some((_, None)) => Some("{}".to_string()),
                    None => None,
                };
                let from_file = value(&["-a", "--arg-file"]).is_some();
                let items = input.filter(|f| !f.dynamic && !from_file).map(|f| {
                    if value(&["-0", "--null"]).is_some() {
                        f.text.split('\0').map(str::to_string).collect::<Vec<_>>()
                    } else if replace.is_some() || value(&["-L", "--max-lines", "-d", "--delimiter"]).is_some() {
                        f.text.lines().map(str::to_string).collect()
                    } else {
                        f.text.split_whitespace().map(str::to_string).collect()
                    }
                });
                (fields.get(i..).unwrap_or(&[]).to_vec(), items, replace)
            }
            "parallel" => {
                let end = fields.iter().position(|f| f.text.starts_with(":::")).unwrap_or(fields.len());
                let i = entry.read(&fields[..end], 1).end;
                let args: Option<Vec<String>> = if end < fields.len() {
                    let known = fields[end + 1..].iter().all(|f| !f.dynamic);
                    known.then(|| {
                        fields[end + 1..]
                            .iter()
                            .filter(|f| !f.text.starts_with(":::"))
                            .map(|f| f.text.clone())
                            .collect()
                    })
                } else {
                    input.filter(|f| !f.dynamic).map(|f| f.text.lines().map(str::to_string).collect())
                };
                (fields[i..end].to_vec(), args, Some("{}".to_string()))
            }
            _ => return false,
        };
        let items: Option<Vec<String>> = items.map(|v| v.into_iter().filter(|s| !s.is_empty()).collect());
        let Some(first) = template.first() else { return false };
        let marker = replace.clone().unwrap_or_default();
        let uses_data = |f: &Field| !marker.is_empty() && f.text.contains(&marker);
        match items {
            Some(items) => {
                let all_read = !items.is_empty() && items.len() <= MAX_BUILT;
                for item in items.iter().take(MAX_BUILT) {
                    let origin = format!("{prog} with `{item}`");
                    if prog == "parallel" && template.len() == 1 {
                        // `parallel 'CMD {}' ::: a b`: a script, the argument in it or appended.
                        let text = if uses_data(first) {
                            first.text.replace(&marker, item)
                        } else {
                            format!("{} {item}", first.text)
                        };
                        let kind = NestedKind::Script(Field { text, dynamic: first.dynamic });
                        self.nested(Nested { origin, kind });
                        continue;
                    }
                    let words: Vec<Field> = match &replace {
                        Some(r) if template.iter().any(uses_data) => template
                            .iter()
                            .map(|f| Field { text: f.text.replace(r.as_str(), item), dynamic: f.dynamic })
                            .collect(),
                        _ => template.iter().cloned().chain(item.split_whitespace().map(Field::lit)).collect(),
                    };
                    self.nested(Nested { origin, kind: NestedKind::Argv(words) });
                }
                all_read
            }
            None => {
                // The data is not known: a program, or a script a shell runs, made of it is not.
                let shell = super::nested::SHELLS.contains(&basename(&first.text));
                if uses_data(first) || (shell && template.iter().skip(1).any(uses_data)) {
                    self.issue(
                        IssueKind::Dynamic,
                        format!("{prog} runs a command made of input only known when it runs"),
                    );
                }
                false
            }
        }
    }
}
