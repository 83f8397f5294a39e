//! Agent spec strings: `kind` or `kind:key=value,key=value`.

use std::collections::BTreeMap;
use std::fmt;
use thiserror::Error;

/// A parsed spec. Keys keep their order-independent, sorted form so that two
/// spellings of the same agent print the same way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentSpec {
    /// The part before `:` (`alphabeta`, `mcts`, `net`): which agent to build.
    pub kind: String,
    /// The `key=value` options, unparsed: only the agent's builder knows
    /// their types, and reads them with [`AgentSpec::get`].
    pub params: BTreeMap<String, String>,
}

/// Why a spec string gives no agent. Every variant carries the spec as the
/// user wrote it (or as it prints), so the message stands on its own in a
/// log; the syntax and kind errors also carry the list of valid forms,
/// since the user evidently does not know them.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum SpecError {
    /// The text is not `kind[:key=value,...]`.
    #[error("bad agent spec `{spec}`: {why}\n{forms}")]
    Syntax {
        /// The spec as given.
        spec: String,
        /// What is wrong with it, naming the option by number.
        why: String,
        /// The valid forms (the caller's help text).
        forms: String,
    },
    /// Well formed, but no agent of that kind exists.
    #[error("bad agent spec `{spec}`: unknown agent kind `{kind}`\n{forms}")]
    UnknownKind {
        /// The spec, printed in its sorted form.
        spec: String,
        /// The kind that is not known.
        kind: String,
        /// The valid forms (the caller's help text).
        forms: String,
    },
    /// An option the agent kind does not take: refused, not ignored, so a
    /// misspelt key does not silently leave a default in force.
    #[error("bad agent spec `{spec}`: `{key}` is not an option of `{kind}` (options: {known})")]
    UnknownKey {
        /// The spec, printed in its sorted form.
        spec: String,
        /// The agent kind.
        kind: String,
        /// The key it does not take.
        key: String,
        /// The keys it takes, comma-separated.
        known: String,
    },
    /// A known option whose value does not parse or is out of range.
    #[error("bad agent spec `{spec}`: `{key}={value}`: {why}")]
    BadValue {
        /// The spec, printed in its sorted form.
        spec: String,
        /// The option.
        key: String,
        /// Its value as given.
        value: String,
        /// The parse error or the range it must lie in.
        why: String,
    },
    /// The spec is valid but building the agent failed (a checkpoint that
    /// does not load, a device that is not there).
    #[error("agent `{spec}` could not be built: {why}")]
    Build {
        /// The spec, printed in its sorted form.
        spec: String,
        /// What failed.
        why: String,
    },
}

impl AgentSpec {
    /// Parses `kind[:key=value[,key=value]...]`. `forms` is the help text
    /// listing valid forms, shown with any error.
    pub fn parse(text: &str, forms: &str) -> Result<AgentSpec, SpecError> {
        let syntax = |why: String| SpecError::Syntax {
            spec: text.to_string(),
            why,
            forms: forms.to_string(),
        };
        // Spaces around a spec or its parts are refused, not trimmed: the
        // spec is written to CSV files as given, and `alphabeta ` and
        // `alphabeta` must not become two agents there. Spaces inside a
        // value (a checkpoint path) are kept.
        if text.trim() != text {
            return Err(syntax(
                "it starts or ends with a space; write it without (quote it in the shell)".into(),
            ));
        }
        let (kind, rest) = match text.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (text, None),
        };
        if kind.is_empty()
            || !kind
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(syntax(format!("`{kind}` is not an agent kind")));
        }
        let mut params = BTreeMap::new();
        if let Some(rest) = rest {
            for (i, pair) in rest.split(',').enumerate() {
                let (k, v) = pair.split_once('=').ok_or_else(|| {
                    syntax(format!("option {} (`{pair}`) is not `key=value`", i + 1))
                })?;
                if k.trim() != k || v.trim() != v {
                    return Err(syntax(format!(
                        "option {} (`{pair}`) has a space around its key or value",
                        i + 1
                    )));
                }
                if k.is_empty() || v.is_empty() {
                    return Err(syntax(format!(
                        "option {} (`{pair}`) has an empty key or value",
                        i + 1
                    )));
                }
                if params.insert(k.to_string(), v.to_string()).is_some() {
                    return Err(syntax(format!("option `{k}` is given twice")));
                }
            }
        }
        Ok(AgentSpec {
            kind: kind.to_string(),
            params,
        })
    }

    /// Fails with [`SpecError::UnknownKey`] if any key is not in `known`.
    pub fn check_keys(&self, known: &[&str]) -> Result<(), SpecError> {
        for key in self.params.keys() {
            if !known.contains(&key.as_str()) {
                return Err(SpecError::UnknownKey {
                    spec: self.to_string(),
                    kind: self.kind.clone(),
                    key: key.clone(),
                    known: known.join(", "),
                });
            }
        }
        Ok(())
    }

    /// The value of `key` parsed as `T`, if given.
    pub fn get<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, SpecError>
    where
        T::Err: fmt::Display,
    {
        match self.params.get(key) {
            None => Ok(None),
            Some(v) => v.parse::<T>().map(Some).map_err(|e| SpecError::BadValue {
                spec: self.to_string(),
                key: key.to_string(),
                value: v.clone(),
                why: e.to_string(),
            }),
        }
    }

    /// The value of `key` parsed as `T`, or `default` when the spec leaves
    /// it out; a value that is given but does not parse is still an error.
    pub fn get_or<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, SpecError>
    where
        T::Err: fmt::Display,
    {
        Ok(self.get(key)?.unwrap_or(default))
    }

    /// The error for a builder that does not know this spec's kind, listing
    /// the valid `forms`.
    pub fn unknown_kind(&self, forms: &str) -> SpecError {
        SpecError::UnknownKind {
            spec: self.to_string(),
            kind: self.kind.clone(),
            forms: forms.to_string(),
        }
    }
}

impl fmt::Display for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.kind)?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let s = AgentSpec::parse("alphabeta:ms=200,depth=6", "forms").unwrap();
        assert_eq!(s.kind, "alphabeta");
        assert_eq!(s.get::<u32>("depth").unwrap(), Some(6));
        assert_eq!(s.to_string(), "alphabeta:depth=6,ms=200");
        assert_eq!(AgentSpec::parse("random", "").unwrap().params.len(), 0);
        assert!(matches!(
            AgentSpec::parse("mcts:sims", "f"),
            Err(SpecError::Syntax { .. })
        ));
        assert!(matches!(
            AgentSpec::parse("mcts:sims=1,sims=2", "f"),
            Err(SpecError::Syntax { .. })
        ));
        assert!(AgentSpec::parse("alphabeta:depth=x", "")
            .unwrap()
            .get::<u32>("depth")
            .is_err());
        let err = AgentSpec::parse("a:b=1", "")
            .unwrap()
            .check_keys(&["c"])
            .unwrap_err();
        assert!(err.to_string().contains("`b` is not an option"));
    }

    #[test]
    fn spaces_around_a_spec_or_its_parts_are_refused() {
        for text in [
            " alphabeta",
            "alphabeta:depth=3 ",
            "alphabeta: depth=3",
            "alphabeta:depth =3",
            "alphabeta:depth= 3",
            "alphabeta :depth=3",
            "mcts:sims=8, cpuct=1",
        ] {
            let err = AgentSpec::parse(text, "forms").unwrap_err();
            assert!(matches!(err, SpecError::Syntax { .. }), "{text}: {err}");
            assert!(err.to_string().contains("space") || err.to_string().contains("kind"));
        }
        // A space inside a value (a checkpoint path) is kept.
        let spec = AgentSpec::parse("net:ckpt=my nets/a.safetensors", "").unwrap();
        assert_eq!(spec.params["ckpt"], "my nets/a.safetensors");
    }
}
