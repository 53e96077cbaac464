//! The floor of one more HTTP hop: a relay that forwards each request it
//! gets, as it is, over a connection of its own to the upstream, and the
//! answer back as it comes, reading no byte of either (hyper on both
//! sides, one thread, as `serve --listen` runs). What any gateway in the
//! path costs on this machine before it does any work.

use std::convert::Infallible;

use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

type Answer = Response<BoxBody<Bytes, hyper::Error>>;

/// Relays 127.0.0.1:`listen` to 127.0.0.1:`upstream` until killed.
pub fn http(listen: u16, upstream: u16) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let listener = TcpListener::bind(("127.0.0.1", listen))
            .await
            .expect("a free port");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(connection(stream, upstream));
        }
    });
}

/// One client connection, over one connection to the upstream.
async fn connection(stream: TcpStream, upstream: u16) {
    let _ = stream.set_nodelay(true);
    let Ok(out) = TcpStream::connect(("127.0.0.1", upstream)).await else {
        return;
    };
    let _ = out.set_nodelay(true);
    let Ok((sender, link)) = hyper::client::conn::http1::handshake(TokioIo::new(out)).await else {
        return;
    };
    tokio::spawn(link);
    let sender = std::sync::Arc::new(tokio::sync::Mutex::new(sender));
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let sender = sender.clone();
        async move {
            let answer = sender.lock().await.send_request(req).await;
            Ok::<Answer, Infallible>(match answer {
                Ok(answer) => answer.map(|body| body.boxed()),
                Err(_) => Response::builder()
                    .status(502)
                    .body(
                        http_body_util::Empty::new()
                            .map_err(|never| match never {})
                            .boxed(),
                    )
                    .expect("a response"),
            })
        }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}
