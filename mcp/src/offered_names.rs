//! The names a toolset has offered the model, each kept by its tool for the toolset's life.
//!
//! A middleware that gates a tool by name (`HumanInTheLoop`, a tool filter, a limit per tool)
//! is only sound if the name keeps meaning the same tool: were a re-listing to rename
//! `files.delete` from `files_delete` to `files_delete_1a2b3c4d` because a newcomer cleans up
//! to `files_delete` too, the gate would guard the newcomer and the original would run
//! ungated. So a name is given once, to the tool that had it first, and never taken back.

use std::collections::HashMap;

/// Every name given so far, both ways.
#[derive(Debug, Default)]
pub(crate) struct OfferedNames {
    /// Per server, each of its tools ever named (by the server's name for it), with its name.
    by_server: HashMap<String, HashMap<String, String>>,
    /// Each name ever given, with the server and the tool it was given to.
    owners: HashMap<String, Owner>,
}

/// The tool a name was given to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    pub(crate) server: String,
    pub(crate) tool: String,
}

/// Why a tool seen for the first time got no name.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unnamed {
    /// Its name, and the name with a suffix, belong to other tools.
    Taken {
        /// The name it would have had.
        name: String,
        /// The tool that has it.
        owner: Owner,
    },
    /// Its server was given names for `limit` tools already.
    TooMany { limit: usize },
}

impl OfferedNames {
    /// The name given to the tool `original` of `server`, if any: still its name when the
    /// server no longer lists it.
    pub(crate) fn get(&self, server: &str, original: &str) -> Option<&str> {
        self.by_server
            .get(server)?
            .get(original)
            .map(String::as_str)
    }

    /// Names the tool `original` of `server`, seen for the first time: `wanted` if no tool has
    /// it, else `fallback` if there is one and no tool has it (the name with a suffix), else
    /// nothing. At most `limit` tools of a server are named: names are never freed, and a
    /// server whose tools keep changing must not grow the toolset without end.
    pub(crate) fn give(
        &mut self,
        server: &str,
        original: &str,
        wanted: String,
        fallback: Option<String>,
        limit: usize,
    ) -> Result<String, Unnamed> {
        debug_assert!(self.get(server, original).is_none(), "named already");
        let named = self.by_server.get(server).map_or(0, HashMap::len);
        if named >= limit {
            return Err(Unnamed::TooMany { limit });
        }
        let name = match self.owners.get(&wanted) {
            None => wanted,
            Some(owner) => match fallback {
                Some(fallback) if !self.owners.contains_key(&fallback) => fallback,
                _ => {
                    return Err(Unnamed::Taken {
                        name: wanted,
                        owner: owner.clone(),
                    });
                }
            },
        };
        let owner = Owner {
            server: server.to_owned(),
            tool: original.to_owned(),
        };
        self.owners.insert(name.clone(), owner);
        self.by_server
            .entry(server.to_owned())
            .or_default()
            .insert(original.to_owned(), name.clone());
        Ok(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(server: &str, tool: &str) -> Owner {
        Owner {
            server: server.to_owned(),
            tool: tool.to_owned(),
        }
    }

    #[test]
    fn the_first_tool_keeps_its_name_and_a_newcomer_gets_the_fallback() {
        let mut names = OfferedNames::default();
        let first = names.give("fs", "files.delete", "files_delete".into(), None, 8);
        assert_eq!(first.as_deref(), Ok("files_delete"));
        let second = names.give(
            "fs",
            "files/delete",
            "files_delete".into(),
            Some("files_delete_1234abcd".into()),
            8,
        );
        assert_eq!(second.as_deref(), Ok("files_delete_1234abcd"));
        assert_eq!(names.get("fs", "files.delete"), Some("files_delete"));
        assert_eq!(
            names.get("fs", "files/delete"),
            Some("files_delete_1234abcd")
        );
        assert_eq!(names.get("other", "files.delete"), None);
    }

    #[test]
    fn a_taken_name_without_a_free_fallback_is_refused_with_its_owner() {
        let mut names = OfferedNames::default();
        names.give("a", "echo", "echo".into(), None, 8).unwrap();
        names.give("a", "echo2", "echo_x".into(), None, 8).unwrap();
        assert_eq!(
            names.give("b", "echo", "echo".into(), None, 8),
            Err(Unnamed::Taken {
                name: "echo".into(),
                owner: owner("a", "echo")
            })
        );
        assert_eq!(
            names.give("b", "echo", "echo".into(), Some("echo_x".into()), 8),
            Err(Unnamed::Taken {
                name: "echo".into(),
                owner: owner("a", "echo")
            })
        );
        assert_eq!(names.get("b", "echo"), None);
    }

    #[test]
    fn a_server_gets_names_for_at_most_its_limit_of_tools() {
        let mut names = OfferedNames::default();
        names.give("a", "one", "one".into(), None, 2).unwrap();
        names.give("a", "two", "two".into(), None, 2).unwrap();
        assert_eq!(
            names.give("a", "three", "three".into(), None, 2),
            Err(Unnamed::TooMany { limit: 2 })
        );
        // Another server has a limit of its own.
        assert!(names.give("b", "three", "b_three".into(), None, 2).is_ok());
    }
}
