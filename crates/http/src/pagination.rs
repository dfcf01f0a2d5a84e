//! The pagination of every list page (`{data, pagination}`, one page type per list) with absolute
//! `next`/`previous` links that repeat the request with another `page`; and what every list's
//! query shares (sort, order, include, page; instants and ids of its filters).

use actix_web::HttpRequest;
use deckhand_domain::decks::{Page, PageRequest, RESULT_WINDOW, SortOrder};
use deckhand_domain::validation::{self, FieldViolation, Violations};
use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use utoipa::ToSchema;
use uuid::Uuid;

/// What every list's query takes besides its filters: the sort key (`S`), `order`,
/// `include` and the page inside the result window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListOptions<S> {
    pub(crate) sort: S,
    pub(crate) order: SortOrder,
    /// `include=summary`.
    pub(crate) with_summary: bool,
    pub(crate) page: PageRequest,
}

impl<S: Default> ListOptions<S> {
    /// The options (`sort` read by `parse_sort`, its default when absent), or every violation:
    /// theirs after those of the filters already recorded in `v`.
    pub(crate) fn parse(
        sort: Option<&str>,
        parse_sort: fn(&str) -> Result<S, FieldViolation>,
        order: Option<&str>,
        include: Option<&str>,
        page: Option<i64>,
        limit: Option<i64>,
        mut v: Violations,
    ) -> Result<Self, Violations> {
        let sort = v.check(sort.map_or(Ok(S::default()), parse_sort));
        let order = v.check(order.map_or(Ok(SortOrder::default()), SortOrder::parse));
        let with_summary = match include {
            None => false,
            Some("summary") => true,
            Some(_) => {
                v.push(FieldViolation::new("include", "invalid", "must be summary"));
                false
            }
        };
        let page = match PageRequest::new(count(page), count(limit)) {
            Ok(page) => Some(page),
            Err(violations) => {
                v.0.extend(violations.0);
                None
            }
        };
        match (sort, order, page) {
            (Some(sort), Some(order), Some(page)) if v.0.is_empty() => Ok(Self {
                sort,
                order,
                with_summary,
                page,
            }),
            _ => Err(v),
        }
    }
}

/// An optional RFC 3339 instant of a list filter; `None` when absent or recorded as invalid.
pub(crate) fn instant(
    field: &str,
    value: &Option<String>,
    v: &mut Violations,
) -> Option<OffsetDateTime> {
    let value = value.as_deref()?;
    v.check(OffsetDateTime::parse(value, &Rfc3339).map_err(|_| {
        FieldViolation::new(
            field,
            "invalid",
            "must be an RFC 3339 date-time, e.g. 2026-01-31T12:00:00Z",
        )
    }))
}

/// An optional id of a list filter; `None` when absent or recorded as invalid.
pub(crate) fn uuid(field: &str, value: &Option<String>, v: &mut Violations) -> Option<Uuid> {
    let value = value.as_deref()?;
    v.check(validation::uuid(field, value, "must be a UUID"))
}

/// A page number as the domain counts it: negatives are 0, huge values saturate.
fn count(value: Option<i64>) -> Option<u32> {
    value.map(|value| u32::try_from(value.max(0)).unwrap_or(u32::MAX))
}

/// Where a page sits in its list, with absolute links to its neighbours.
#[derive(Debug, Serialize, ToSchema)]
pub struct Pagination {
    /// 1-based.
    page: u32,
    limit: u32,
    /// Matching items, counted up to 10000.
    total: u64,
    /// False when `total` stopped at 10000.
    total_exact: bool,
    total_pages: u64,
    /// This request with the next page; null on the last page or past the result window.
    next: Option<String>,
    /// This request with the previous page; null on the first.
    previous: Option<String>,
}

impl Pagination {
    /// The pagination of `page`, answered to `request` for the `asked` window.
    pub fn new<U>(
        request: &HttpRequest,
        public_url: &str,
        page: &Page<U>,
        asked: PageRequest,
    ) -> Self {
        let total_pages = page.total.div_ceil(u64::from(asked.limit));
        let link = |number: u32| Some(page_link(request, public_url, number));
        let next_fits =
            u64::from(asked.page + 1) * u64::from(asked.limit) <= u64::from(RESULT_WINDOW);
        Self {
            page: asked.page,
            limit: asked.limit,
            total: page.total,
            total_exact: page.total_exact,
            total_pages,
            next: (u64::from(asked.page) < total_pages && next_fits)
                .then(|| link(asked.page + 1))
                .flatten(),
            previous: (asked.page > 1).then(|| link(asked.page - 1)).flatten(),
        }
    }
}

/// The request's URL under `public_url`, its query kept but for `page`.
fn page_link(request: &HttpRequest, public_url: &str, page: u32) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (key, value) in form_urlencoded::parse(request.query_string().as_bytes()) {
        if key != "page" {
            query.append_pair(&key, &value);
        }
    }
    query.append_pair("page", &page.to_string());
    format!("{public_url}{}?{}", request.path(), query.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn links_keep_the_query_and_change_the_page() {
        let request = TestRequest::get()
            .uri("/api/public/v1/games/mtg/decks?q=burn%20it&page=2&limit=10")
            .to_http_request();
        let page = Page {
            items: vec![(); 10],
            total: 35,
            total_exact: true,
        };
        let asked = PageRequest { page: 2, limit: 10 };
        let body = serde_json::to_value(Pagination::new(&request, "https://x.test", &page, asked))
            .unwrap();
        assert_eq!(body["total_pages"], 4);
        assert_eq!(
            body["next"],
            "https://x.test/api/public/v1/games/mtg/decks?q=burn+it&limit=10&page=3"
        );
        assert_eq!(
            body["previous"],
            "https://x.test/api/public/v1/games/mtg/decks?q=burn+it&limit=10&page=1"
        );
    }

    #[test]
    fn no_next_link_past_the_last_page_or_the_result_window() {
        let request = TestRequest::get()
            .uri("/d?page=100&limit=100")
            .to_http_request();
        let page = Page {
            items: vec![(); 100],
            total: 10_000,
            total_exact: false,
        };
        let body = serde_json::to_value(Pagination::new(
            &request,
            "http://h",
            &page,
            PageRequest {
                page: 100,
                limit: 100,
            },
        ))
        .unwrap();
        assert!(body["next"].is_null());
        assert_eq!(body["total_exact"], false);
    }
}
