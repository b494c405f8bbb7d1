//! SearXNG's JSON API (its documentation, "Search API"):
//! `GET {instance}/search?q=…&format=json&pageno=…`, results in
//! `results[]`, each `{title, url, content}`. The instance must list
//! `json` among its `search.formats` (else it answers 403). A page holds
//! what the instance gives (about ten); `offset` pages of them are skipped.

use serde_json::Value;

use super::provider::{encoded, joined, Hit, Search};

/// The URL of a search on the instance at `base` (its address, or its
/// `/search` endpoint).
pub fn url(base: &str, search: &Search) -> String {
    let base = base.trim_end_matches('/');
    let endpoint =
        if base.ends_with("/search") { base.to_owned() } else { format!("{base}/search") };
    let page = search.offset.saturating_add(1);
    joined(&endpoint, &format!("q={}&format=json&pageno={page}", encoded(&search.query)))
}

/// The results of an answer; `None` when it is not SearXNG's format.
pub fn hits(answer: &Value) -> Option<Vec<Hit>> {
    let results = answer.as_object()?.get("results")?.as_array()?;
    Some(results.iter().filter_map(|r| Hit::of(r, "content")).collect())
}

/// The engines that did not answer, as SearXNG lists them
/// (`unresponsive_engines`: `[name, why]` pairs), for an empty answer.
pub fn unresponsive(answer: &Value) -> Vec<String> {
    let Some(list) = answer.get("unresponsive_engines").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|pair| {
            let name = pair.get(0)?.as_str()?;
            Some(match pair.get(1).and_then(Value::as_str) {
                Some(why) => format!("{name} ({why})"),
                None => name.to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_page_follows_the_offset_and_the_path_is_added_once() {
        let search = Search { query: "a b".into(), count: 10, offset: 0 };
        assert_eq!(
            url("http://127.0.0.1:8888", &search),
            "http://127.0.0.1:8888/search?q=a%20b&format=json&pageno=1"
        );
        let second = Search { offset: 1, ..search };
        assert_eq!(
            url("http://h/searx/search/", &second),
            "http://h/searx/search?q=a%20b&format=json&pageno=2"
        );
    }

    #[test]
    fn results_and_silent_engines_are_read() {
        let answer = json!({"query": "q", "results": [
            {"title": "T", "url": "https://t.org/", "content": "c", "engine": "ddg"}
        ], "unresponsive_engines": [["google", "timeout"], ["bing"]]});
        let hits = hits(&answer).unwrap();
        assert_eq!((hits[0].url.as_str(), hits[0].snippet.as_str()), ("https://t.org/", "c"));
        assert_eq!(unresponsive(&answer), ["google (timeout)", "bing"]);
        assert_eq!(super::hits(&json!({"web": {}})), None);
    }
}
