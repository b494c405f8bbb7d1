//! The table of the thirteen tools: the six of both profiles and the full
//! profile's own (the four job tools, list_allowed_directories, apply_patch,
//! web_fetch).
//! Everything the binary knows about a tool is its entry: its names (the
//! schema name, the command name, and from them every spelling it answers
//! to), its schemas, its title and the hints a host reads before a call,
//! the fields its answer shows in the full profile only, and the function
//! that runs it. The dispatcher, the MCP catalog, `--list` (which
//! install.sh reads to lay out the links), the host commands and the tests
//! read this table and nothing else.

use crate::context::Context;
use crate::profile::Profile;
use crate::protocol::{Args, Outcome};

mod apply_patch;
mod bash;
mod diff;
mod file_edit;
mod file_read;
mod file_write;
mod glob;
mod grep;
mod job_kill;
mod job_list;
mod job_output;
mod job_write;
mod list_allowed_directories;
pub mod near_miss;
mod params;
mod web_fetch;

pub struct Tool {
    /// The schema name, as models call it: `file_read`.
    pub name: &'static str,
    /// The name of its executable in `libexec/ikigai/`: `file-read`.
    pub command: &'static str,
    /// The schema texts, one a profile.
    pub schemas: Schemas,
    /// A title for people (MCP's `title`).
    pub title: &'static str,
    /// What a host may assume about a call (MCP's annotations).
    pub hints: Hints,
    /// The fields of its answer the seed profile does not show; a tool may
    /// leave them out itself (file_read does not hash in the seed), but
    /// `Tool::call` drops them whatever it does.
    pub full_fields: &'static [&'static str],
    pub(crate) run: fn(&Args, &Context) -> Outcome,
}

/// A tool's schema texts, one a profile (docs/SPEC.md, "Profiles");
/// [`Tool::schema`] chooses among them.
pub struct Schemas {
    /// The `--schema` text of the seed profile, exactly as docs/SPEC.md
    /// prints it (with a final newline).
    pub seed: &'static str,
    /// The full profile's: every seed parameter, with the same meaning, and
    /// optional ones beside them.
    pub full: &'static str,
}

/// What a host may assume about a tool before calling it, to decide what
/// to ask the user first (Codex, for one, treats a tool without hints as
/// destructive). Every entry says all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// Changes nothing (MCP's `readOnlyHint`).
    pub read_only: bool,
    /// May destroy what is there: a write replaces a file, a command may
    /// do anything (`destructiveHint`).
    pub destructive: bool,
    /// May reach beyond the local file system: the network
    /// (`openWorldHint`).
    pub open_world: bool,
}

/// Reads the local file system and changes nothing.
const READS: Hints = Hints { read_only: true, destructive: false, open_world: false };
/// Changes files, and nothing beyond the local file system.
const WRITES: Hints = Hints { read_only: false, destructive: true, open_world: false };
/// Stops processes (a job's), and nothing else.
const STOPS: Hints = Hints { read_only: false, destructive: true, open_world: false };
/// Reads the web and changes nothing (web_fetch).
const READS_THE_WEB: Hints = Hints { read_only: true, destructive: false, open_world: true };
/// Anything at all: a shell command.
const ANYTHING: Hints = Hints { read_only: false, destructive: true, open_world: true };

/// The six tools of both profiles (the seed's, in its order).
pub static TOOLS: [Tool; 6] = [
    Tool {
        name: "bash",
        command: "bash",
        schemas: Schemas {
            seed: include_str!("bash.schema.json"),
            full: include_str!("bash.full.schema.json"),
        },
        title: "Run a shell command",
        hints: ANYTHING,
        full_fields: &["timed_out", "job_id"],
        run: bash::run,
    },
    Tool {
        name: "file_read",
        command: "file-read",
        schemas: Schemas {
            seed: include_str!("file_read.schema.json"),
            full: include_str!("file_read.full.schema.json"),
        },
        title: "Read a file",
        hints: READS,
        full_fields: &["total_lines", "sha256", "image", "binary"],
        run: file_read::run,
    },
    Tool {
        name: "file_write",
        command: "file-write",
        schemas: Schemas {
            seed: include_str!("file_write.schema.json"),
            full: include_str!("file_write.full.schema.json"),
        },
        title: "Write a file",
        hints: WRITES,
        full_fields: &["sha256"],
        run: file_write::run,
    },
    Tool {
        name: "file_edit",
        command: "file-edit",
        schemas: Schemas {
            seed: include_str!("file_edit.schema.json"),
            full: include_str!("file_edit.full.schema.json"),
        },
        title: "Edit a file",
        hints: WRITES,
        full_fields: &["diff", "sha256"],
        run: file_edit::run,
    },
    Tool {
        name: "glob",
        command: "glob",
        schemas: Schemas {
            seed: include_str!("glob.schema.json"),
            full: include_str!("glob.full.schema.json"),
        },
        title: "Find files by pattern",
        hints: READS,
        full_fields: &["truncated", "ignore_files_skipped"],
        run: glob::run,
    },
    Tool {
        name: "grep",
        command: "grep",
        schemas: Schemas {
            seed: include_str!("grep.schema.json"),
            full: include_str!("grep.full.schema.json"),
        },
        title: "Search file contents",
        hints: READS,
        full_fields: &[
            "files_searched",
            "files_skipped",
            "next_offset",
            "truncated",
            "ignore_files_skipped",
        ],
        run: grep::run,
    },
];

/// The full profile's own tools, after the six: the job tools
/// (docs/TOOLS.md, "Jobs"), list_allowed_directories (docs/CONFINEMENT.md,
/// "What a confined call is told"), apply_patch (docs/TOOLS.md,
/// "apply_patch") and web_fetch (docs/TOOLS.md, "web_fetch"). Their seed schema is their full one; no seed lists them.
pub static FULL_ONLY: [Tool; 7] = [
    Tool {
        name: "job_output",
        command: "job-output",
        schemas: Schemas {
            seed: include_str!("job_output.full.schema.json"),
            full: include_str!("job_output.full.schema.json"),
        },
        title: "Read a job's output",
        hints: READS,
        full_fields: &[],
        run: job_output::run,
    },
    Tool {
        name: "job_kill",
        command: "job-kill",
        schemas: Schemas {
            seed: include_str!("job_kill.full.schema.json"),
            full: include_str!("job_kill.full.schema.json"),
        },
        title: "Stop a job",
        hints: STOPS,
        full_fields: &[],
        run: job_kill::run,
    },
    Tool {
        name: "job_list",
        command: "job-list",
        schemas: Schemas {
            seed: include_str!("job_list.full.schema.json"),
            full: include_str!("job_list.full.schema.json"),
        },
        title: "List jobs",
        hints: READS,
        full_fields: &[],
        run: job_list::run,
    },
    Tool {
        name: "job_write",
        command: "job-write",
        schemas: Schemas {
            seed: include_str!("job_write.full.schema.json"),
            full: include_str!("job_write.full.schema.json"),
        },
        title: "Write to a job",
        // What it types, the job's command runs (a shell at a prompt).
        hints: ANYTHING,
        full_fields: &[],
        run: job_write::run,
    },
    Tool {
        name: "list_allowed_directories",
        command: "list-allowed-directories",
        schemas: Schemas {
            seed: include_str!("list_allowed_directories.full.schema.json"),
            full: include_str!("list_allowed_directories.full.schema.json"),
        },
        title: "List the allowed directories",
        hints: READS,
        full_fields: &[],
        run: list_allowed_directories::run,
    },
    Tool {
        name: "apply_patch",
        command: "apply-patch",
        schemas: Schemas {
            seed: include_str!("apply_patch.full.schema.json"),
            full: include_str!("apply_patch.full.schema.json"),
        },
        title: "Apply a patch",
        hints: WRITES,
        full_fields: &[],
        run: apply_patch::run,
    },
    Tool {
        name: "web_fetch",
        command: "web-fetch",
        schemas: Schemas {
            seed: include_str!("web_fetch.full.schema.json"),
            full: include_str!("web_fetch.full.schema.json"),
        },
        title: "Fetch a web page",
        hints: READS_THE_WEB,
        full_fields: &[],
        run: web_fetch::run,
    },
];

impl Tool {
    /// One call: the parameter-name rule (`params`), the tool's run, and
    /// the answer's full-profile fields dropped in the seed. Every call
    /// passes here, the MCP server's included (its calls run the same
    /// dispatch in a child).
    pub(crate) fn call(&self, args: &Args, context: &Context) -> Outcome {
        params::check(self, args, context.profile)?;
        let mut answer = (self.run)(args, context)?;
        if !context.profile.is_full() {
            answer.retain(|(name, _)| !self.full_fields.contains(name));
        }
        Ok(answer)
    }

    /// Every spelling the tool answers to (README, "The tools") besides `command`:
    /// the schema name, and both with a `-tool` or `_tool` suffix.
    pub fn aliases(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let spellings = [self.name.to_owned()].into_iter().chain(
            [self.name, self.command]
                .into_iter()
                .flat_map(|base| ["-tool", "_tool"].map(|suffix| format!("{base}{suffix}"))),
        );
        for spelling in spellings {
            if spelling != self.command && !names.contains(&spelling) {
                names.push(spelling);
            }
        }
        names
    }

    /// The schema a host is shown in `profile`.
    pub fn schema(&self, profile: Profile) -> &'static str {
        match profile {
            Profile::Seed => self.schemas.seed,
            Profile::Full => self.schemas.full,
        }
    }

    /// The description of the schema in `profile` (for usage texts and
    /// listings).
    pub fn description(&self, profile: Profile) -> String {
        serde_json::from_str::<serde_json::Value>(self.schema(profile))
            .ok()
            .and_then(|v| v.get("description")?.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// The tool a name stands for, in any of its spellings, with any extension
/// (`file-read-tool`, `file_read.sh`), among the six.
pub fn find(name: &str) -> Option<&'static Tool> {
    find_in(name, Profile::Seed)
}

/// The tools of `profile`, in the table's order: the six, and in the full
/// profile its own tools after them.
pub fn of(profile: Profile) -> impl Iterator<Item = &'static Tool> + Clone {
    let full: &'static [Tool] = if profile.is_full() { &FULL_ONLY } else { &[] };
    TOOLS.iter().chain(full)
}

/// `find` among the tools of `profile`: the job tools are unknown in the
/// seed.
pub fn find_in(name: &str, profile: Profile) -> Option<&'static Tool> {
    let normal = normalize_name(name);
    of(profile).find(|t| t.name == normal)
}

/// The tool name a file or command name stands for (README, "The tools"): without
/// an extension and a `-tool`/`_tool` suffix, `-` read as `_`.
pub fn normalize_name(name: &str) -> String {
    let stem = name.split('.').next().unwrap_or(name).replace('-', "_");
    stem.strip_suffix("_tool").filter(|s| !s.is_empty()).unwrap_or(&stem).to_owned()
}

/// The schema names, comma-separated, for messages.
pub fn names() -> String {
    TOOLS.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_finds_its_tool() {
        for (name, tool) in [
            ("bash", "bash"),
            ("bash-tool", "bash"),
            ("file-read", "file_read"),
            ("file_read", "file_read"),
            ("file-read-tool", "file_read"),
            ("file_read_tool", "file_read"),
            ("file_read.sh", "file_read"),
            ("grep.exe", "grep"),
        ] {
            assert_eq!(find(name).map(|t| t.name), Some(tool), "{name}");
        }
        assert_eq!(normalize_name("my_tool"), "my");
        assert_eq!(normalize_name("_tool"), "_tool");
        assert_eq!(normalize_name("x.py"), "x");
        assert!(find("cat").is_none());
        assert!(find("file_reader").is_none());
        assert!(find("").is_none());
    }

    #[test]
    fn schemas_parse_and_carry_their_names() {
        for tool in of(Profile::Full) {
            for profile in [Profile::Seed, Profile::Full] {
                let schema = tool.schema(profile);
                let v: serde_json::Value = serde_json::from_str(schema).unwrap();
                assert_eq!(v["name"], tool.name);
                assert!(schema.ends_with("}\n") && !schema.ends_with("\n\n"));
            }
        }
    }

    /// The full profile is a strict superset of the seed: every seed
    /// parameter is there with the same type, none it does not require is
    /// required, and every new parameter is optional and described.
    #[test]
    fn the_full_schemas_are_a_superset_of_the_seed() {
        use serde_json::Value;
        for tool in &TOOLS {
            let seed: Value = serde_json::from_str(tool.schema(Profile::Seed)).unwrap();
            let full: Value = serde_json::from_str(tool.schema(Profile::Full)).unwrap();
            let (sp, fp) = (&seed["parameters"], &full["parameters"]);
            let seed_props = sp["properties"].as_object().unwrap();
            let full_props = fp["properties"].as_object().unwrap();
            for (name, param) in seed_props {
                assert_eq!(full_props[name]["type"], param["type"], "{}.{name}", tool.name);
            }
            let seed_required: Vec<&Value> = sp["required"].as_array().unwrap().iter().collect();
            for required in fp["required"].as_array().unwrap() {
                assert!(
                    seed_required.contains(&required),
                    "{}: {required} newly required",
                    tool.name
                );
            }
            for (name, param) in full_props {
                let text = param["description"].as_str().unwrap_or_default();
                assert!(!text.trim().is_empty(), "{}.{name}: described for a model", tool.name);
            }
        }
    }

    /// Which answer fields the seed shows is the table's to say: a field
    /// of `full_fields` a tool answers anyway is dropped in the seed, kept
    /// in the full profile.
    #[test]
    fn the_seed_answer_drops_the_full_fields_whatever_the_tool_answers() {
        use crate::context::Dialect;
        use crate::json::Field;
        fn run(_: &Args, _: &Context) -> Outcome {
            Ok(vec![("output", Field::Int(1)), ("sha256", Field::Int(2)), ("count", Field::Int(3))])
        }
        let tool = Tool {
            name: "file_read",
            command: "file-read",
            schemas: Schemas { seed: TOOLS[1].schemas.seed, full: TOOLS[1].schemas.full },
            title: "Read a file",
            hints: READS,
            full_fields: &["sha256"],
            run,
        };
        let args = Args::parse(b"{}").unwrap();
        let keys = |profile| {
            let context = Context::from_env("file-read", Dialect::Ikigai, profile);
            tool.call(&args, &context).unwrap().into_iter().map(|(k, _)| k).collect::<Vec<_>>()
        };
        assert_eq!(keys(Profile::Seed), ["output", "count"]);
        assert_eq!(keys(Profile::Full), ["output", "sha256", "count"]);
    }

    /// Only a field a seed answer does not have can be dropped from it.
    #[test]
    fn no_full_field_is_a_seed_field() {
        for tool in of(Profile::Full) {
            for field in tool.full_fields {
                assert!(!["output", "count", "exit_code", "bytes", "replacements"].contains(field));
            }
        }
    }

    #[test]
    fn aliases_cover_the_contract_spellings() {
        let tool = find("file_read").unwrap();
        assert_eq!(
            tool.aliases(),
            ["file_read", "file_read-tool", "file_read_tool", "file-read-tool", "file-read_tool"]
        );
    }

    /// Every entry says who it is for people and what a host may assume:
    /// a seventh tool cannot list as destructive or open-world by default,
    /// and what each of the six may do is pinned here.
    #[test]
    fn every_tool_has_a_title_and_its_hints() {
        for tool in of(Profile::Full) {
            let Tool { name, title, hints, .. } = tool;
            assert!(!title.trim().is_empty() && title != name, "{name}: a title for people");
            assert!(!(hints.read_only && hints.destructive), "{name}: read-only yet destructive");
            let expected = match *name {
                "bash" | "job_write" => ANYTHING,
                "file_write" | "file_edit" | "apply_patch" => WRITES,
                "file_read" | "glob" | "grep" | "job_output" | "job_list" => READS,
                "list_allowed_directories" => READS,
                "job_kill" => STOPS,
                "web_fetch" => READS_THE_WEB,
                other => panic!("{other}: a new tool; say here what it may do"),
            };
            assert_eq!(*hints, expected, "{name}");
        }
        let names: Vec<&str> = of(Profile::Full).map(|t| t.name).collect();
        let commands: Vec<&str> = of(Profile::Full).map(|t| t.command).collect();
        for list in [&names, &commands] {
            let mut unique = list.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), TOOLS.len() + FULL_ONLY.len(), "{list:?}: each once");
        }
    }
}
