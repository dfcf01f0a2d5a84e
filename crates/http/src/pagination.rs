//! The pagination envelope of every list: `{data, pagination}` with absolute
//! `next`/`previous` links that repeat the request with another `page`.

use actix_web::HttpRequest;
use deckhand_domain::decks::{Page, PageRequest, RESULT_WINDOW, SortOrder};
use deckhand_domain::validation::{FieldViolation, Violations};
use serde::Serialize;
use utoipa::ToSchema;

/// What every list's query takes besides its filters and sort key: `order`, `include` and the
/// page inside the result window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListOptions {
    pub(crate) order: SortOrder,
    /// `include=summary`.
    pub(crate) with_summary: bool,
    pub(crate) page: PageRequest,
}

impl ListOptions {
    /// The options, or `None` with every violation recorded in `v`.
    pub(crate) fn parse(
        order: Option<&str>,
        include: Option<&str>,
        page: Option<i64>,
        limit: Option<i64>,
        v: &mut Violations,
    ) -> Option<Self> {
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
        Some(Self {
            order: order?,
            with_summary,
            page: page?,
        })
    }
}

/// A page number as the domain counts it: negatives are 0, huge values saturate.
fn count(value: Option<i64>) -> Option<u32> {
    value.map(|value| u32::try_from(value.max(0)).unwrap_or(u32::MAX))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PaginationDto {
    page: u32,
    limit: u32,
    /// Matching items, counted up to 10000.
    total: u64,
    /// False when `total` stopped at 10000.
    total_exact: bool,
    total_pages: u64,
    next: Option<String>,
    previous: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Paginated<T: ToSchema> {
    data: Vec<T>,
    pagination: PaginationDto,
}

impl<T: ToSchema> Paginated<T> {
    pub fn new<U>(
        request: &HttpRequest,
        public_url: &str,
        page: &Page<U>,
        asked: PageRequest,
        data: Vec<T>,
    ) -> Self {
        let total_pages = page.total.div_ceil(u64::from(asked.limit));
        let link = |number: u32| Some(page_link(request, public_url, number));
        let next_fits =
            u64::from(asked.page + 1) * u64::from(asked.limit) <= u64::from(RESULT_WINDOW);
        Self {
            data,
            pagination: PaginationDto {
                page: asked.page,
                limit: asked.limit,
                total: page.total,
                total_exact: page.total_exact,
                total_pages,
                next: (u64::from(asked.page) < total_pages && next_fits)
                    .then(|| link(asked.page + 1))
                    .flatten(),
                previous: (asked.page > 1).then(|| link(asked.page - 1)).flatten(),
            },
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
        let body = serde_json::to_value(Paginated::<String>::new(
            &request,
            "https://x.test",
            &page,
            asked,
            vec![],
        ))
        .unwrap();
        assert_eq!(body["pagination"]["total_pages"], 4);
        assert_eq!(
            body["pagination"]["next"],
            "https://x.test/api/public/v1/games/mtg/decks?q=burn+it&limit=10&page=3"
        );
        assert_eq!(
            body["pagination"]["previous"],
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
        let body = serde_json::to_value(Paginated::<String>::new(
            &request,
            "http://h",
            &page,
            PageRequest {
                page: 100,
                limit: 100,
            },
            vec![],
        ))
        .unwrap();
        assert!(body["pagination"]["next"].is_null());
        assert_eq!(body["pagination"]["total_exact"], false);
    }
}
