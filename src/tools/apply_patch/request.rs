//! apply_patch's arguments, read and type-checked once.

use crate::error::ToolError;
use crate::protocol::Args;

pub struct Request<'a> {
    /// The patch, `*** Begin Patch` … `*** End Patch` (the name OpenAI's
    /// models send).
    pub input: &'a str,
    /// What the patch's paths are relative to; the working directory (or,
    /// confined, the roots' working directory) when not given.
    pub workdir: Option<&'a str>,
    pub dry_run: bool,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Request<'a>, ToolError> {
        Ok(Request {
            input: args.required_str("input")?,
            workdir: args.optional_path("workdir")?,
            dry_run: args.optional_bool("dry_run")?.unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(json: &str) -> Result<(String, Option<String>, bool), String> {
        let args = Args::parse(json.as_bytes()).map_err(|e| e.to_string())?;
        let r = Request::parse(&args).map_err(|e| e.to_string())?;
        Ok((r.input.to_owned(), r.workdir.map(str::to_owned), r.dry_run))
    }

    #[test]
    fn input_is_required_and_the_rest_typed() {
        assert_eq!(parsed(r#"{"input":"p"}"#), Ok(("p".into(), None, false)));
        assert_eq!(
            parsed(r#"{"input":"p","workdir":"w","dry_run":true}"#),
            Ok(("p".into(), Some("w".into()), true))
        );
        assert_eq!(parsed(r#"{}"#), Err("missing required parameter: input".into()));
        assert_eq!(
            parsed(r#"{"input":"p","dry_run":1}"#),
            Err("parameter dry_run must be a boolean".into())
        );
    }
}
