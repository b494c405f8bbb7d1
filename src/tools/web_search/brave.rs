//! Brave Search's web search API (its documentation, "Web search"):
//! `GET …/res/v1/web/search?q=…&count=…&offset=…` with the key in the
//! `X-Subscription-Token` header; results in `web.results[]`, each
//! `{title, url, description}`, the description marked up with `<strong>`.
//! `offset` counts pages of `count` results, as upstream ikigai passes it.

use serde_json::Value;

use super::provider::{encoded, joined, Hit, Search};

/// The URL of a search at `endpoint`.
pub fn url(endpoint: &str, search: &Search) -> String {
    joined(
        endpoint,
        &format!("q={}&count={}&offset={}", encoded(&search.query), search.count, search.offset),
    )
}

/// The results of an answer; `None` when it is not Brave's format. An
/// answer without `web` has no web results (Brave leaves it out then).
pub fn hits(answer: &Value) -> Option<Vec<Hit>> {
    let root = answer.as_object()?;
    let Some(web) = root.get("web") else {
        return Some(Vec::new());
    };
    let results = web.get("results")?.as_array()?;
    Some(results.iter().filter_map(|r| Hit::of(r, "description")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_query_count_and_offset_are_passed_encoded() {
        let search = Search { query: "rust & c++/é".into(), count: 5, offset: 2 };
        assert_eq!(
            url("https://api.search.brave.com/res/v1/web/search", &search),
            "https://api.search.brave.com/res/v1/web/search?q=rust%20%26%20c%2B%2B%2F%C3%A9\
             &count=5&offset=2"
        );
        assert_eq!(
            url("http://proxy/b?k=v", &search).split('&').nth(1),
            Some("q=rust%20%26%20c%2B%2B%2F%C3%A9")
        );
    }

    #[test]
    fn results_come_from_web_results_and_other_shapes_are_refused() {
        let answer = json!({"type": "search", "web": {"results": [
            {"title": "A", "url": "https://a.com/", "description": "the <strong>a</strong>"},
            {"title": "no url"},
            {"url": "https://b.com/"}
        ]}});
        let hits = hits(&answer).unwrap();
        assert_eq!(hits.len(), 2);
        assert_eq!((hits[0].title.as_str(), hits[0].snippet.as_str()), ("A", "the a"));
        assert_eq!((hits[1].title.as_str(), hits[1].url.as_str()), ("", "https://b.com/"));
        assert_eq!(super::hits(&json!({"type": "search"})), Some(Vec::new()));
        assert_eq!(super::hits(&json!({"web": {"results": 3}})), None);
        assert_eq!(super::hits(&json!([1])), None);
    }
}
