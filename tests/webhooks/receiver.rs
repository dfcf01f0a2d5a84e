//! A webhook receiver on loopback: records what it is sent and answers as scripted.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// How the receiver answers one request; once the script is over, 204.
#[derive(Debug, Clone)]
pub enum Answer {
    Status(u16),
    Redirect(String),
    /// Never answers within any test's timeout.
    Hang,
}

#[derive(Debug, Clone)]
pub struct Received {
    /// As the `http` 1 map the reference implementation reads.
    pub headers: HeaderMap,
    pub body: String,
    /// When the request arrived.
    pub at: Instant,
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Answer>>,
    received: Mutex<Vec<Received>>,
}

pub struct Receiver {
    pub url: String,
    shared: Arc<Shared>,
    server: actix_web::dev::ServerHandle,
}

async fn receive(
    request: HttpRequest,
    body: web::Bytes,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let mut headers = HeaderMap::new();
    for (name, value) in request.headers() {
        headers.append(
            HeaderName::from_bytes(name.as_str().as_bytes()).unwrap(),
            HeaderValue::from_bytes(value.as_bytes()).unwrap(),
        );
    }
    shared.received.lock().unwrap().push(Received {
        headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
        at: Instant::now(),
    });
    let answer = shared.script.lock().unwrap().pop_front();
    match answer {
        None => HttpResponse::NoContent().finish(),
        Some(Answer::Status(status)) => {
            HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                .body("scripted")
        }
        Some(Answer::Redirect(to)) => HttpResponse::TemporaryRedirect()
            .insert_header(("location", to))
            .finish(),
        Some(Answer::Hang) => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            HttpResponse::NoContent().finish()
        }
    }
}

impl Receiver {
    pub async fn start(script: Vec<Answer>) -> Self {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            received: Mutex::default(),
        });
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let data = web::Data::from(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(web::to(receive))
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            url,
            shared,
            server: handle,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let stop = self.server.stop(false);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(stop);
        }
    }
}
