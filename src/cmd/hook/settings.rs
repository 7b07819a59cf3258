//! A host's JSON settings file as written: objects keep their keys in file order (serde_json's
//! own `Map` sorts them unless its `preserve_order` feature is on, which would change the order
//! of every JSON object cmdguard prints), and cmdguard's hook entry is added or removed in place.
//! The file is printed back with two-space indentation.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value with object keys in their written order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn from_value(v: serde_json::Value) -> Json {
        use serde_json::Value as V;
        match v {
            V::Null => Json::Null,
            V::Bool(b) => Json::Bool(b),
            V::Number(n) => Json::Num(n),
            V::String(s) => Json::Str(s),
            V::Array(a) => Json::Arr(a.into_iter().map(Json::from_value).collect()),
            V::Object(o) => Json::Obj(o.into_iter().map(|(k, v)| (k, Json::from_value(v))).collect()),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The member `key` of an object, created as `empty` if missing; `None` if `self` is not an object.
    pub fn entry(&mut self, key: &str, empty: Json) -> Option<&mut Json> {
        let Json::Obj(fields) = self else { return None };
        let at = match fields.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                fields.push((key.to_string(), empty));
                fields.len() - 1
            }
        };
        Some(&mut fields[at].1)
    }

    pub fn remove(&mut self, key: &str) {
        if let Json::Obj(fields) = self {
            fields.retain(|(k, _)| k != key);
        }
    }

    pub fn is_empty_container(&self) -> bool {
        matches!(self, Json::Obj(f) if f.is_empty()) || matches!(self, Json::Arr(a) if a.is_empty())
    }

    /// Pretty-printed, two-space indentation, with a final newline.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    /// On one line, as shown in messages.
    pub fn compact(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, usize::MAX);
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        let compact = depth == usize::MAX;
        let (open, close) = match self {
            Json::Arr(_) => ('[', ']'),
            Json::Obj(_) => ('{', '}'),
            Json::Null => return out.push_str("null"),
            Json::Bool(b) => return out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => return out.push_str(&n.to_string()),
            Json::Str(s) => return out.push_str(&quote(s)),
        };
        let items: Vec<(Option<&str>, &Json)> = match self {
            Json::Arr(a) => a.iter().map(|v| (None, v)).collect(),
            Json::Obj(f) => f.iter().map(|(k, v)| (Some(k.as_str()), v)).collect(),
            _ => unreachable!(),
        };
        out.push(open);
        if items.is_empty() {
            out.push(close);
            return;
        }
        let inner = if compact { depth } else { depth + 1 };
        for (i, (key, value)) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if !compact {
                out.push('\n');
                out.push_str(&"  ".repeat(inner));
            }
            if let Some(k) = key {
                out.push_str(&quote(k));
                out.push_str(if compact { ":" } else { ": " });
            }
            value.write(out, inner);
        }
        if !compact {
            out.push('\n');
            out.push_str(&"  ".repeat(depth));
        }
        out.push(close);
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Parses settings text; the error names the line and column.
pub fn parse(text: &str) -> Result<Json, serde_json::Error> {
    serde_json::from_str(text)
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Num(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Num(n.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n).map(Json::Num).ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::Str(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::Str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Json::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut fields = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            fields.push((k, v));
        }
        Ok(Json::Obj(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn keys_keep_their_order_and_values_survive() {
        let text = "{\n  \"zeta\": 1,\n  \"alpha\": [\n    true,\n    null,\n    -2.5\n  ],\n  \"mid\": {\n    \"b\": \"x\\ny\",\n    \"a\": {}\n  },\n  \"empty\": []\n}\n";
        let doc = parse(text).unwrap();
        assert_eq!(doc.pretty(), text);
        assert_eq!(doc.compact(), r#"{"zeta":1,"alpha":[true,null,-2.5],"mid":{"b":"x\ny","a":{}},"empty":[]}"#);
        let err = parse("{\n  \"a\": 1,\n  oops\n}").unwrap_err();
        assert_eq!((err.line(), err.column() > 0), (3, true));
    }
}
