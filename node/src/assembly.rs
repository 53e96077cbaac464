//! The assembler (settings as the CLI takes them) and its result.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_preamble::settings::Keywords;
use mcp_preamble::{Assembler, Assembly, ServerSnapshot};
use napi::bindgen_prelude::{AsyncTask, ClassInstance};
use napi::{Env, Task};
use napi_derive::napi;

use crate::errors::{parse, to_js};
use crate::pins::NativeLock;
use crate::server::NativeServer;

/// The `Assembler` options, as the CLI's `preview` flags and the policy
/// file's `[defaults]` keys take them. Counts arrive as the decimal text of
/// a JavaScript integer, so they are checked as the CLI checks its flags
/// ([`Keywords`]).
#[napi(object)]
pub struct NativeOptions {
    pub policy: Option<String>,
    pub budget: Option<String>,
    pub total_budget: Option<String>,
    pub defer_over: Option<String>,
    pub server_budgets: Option<Vec<Vec<String>>>,
    pub deferred: Option<Vec<String>>,
    pub template: Option<String>,
    pub encoding: Option<String>,
    pub model: Option<String>,
    pub tokenizer: Option<String>,
    pub tool_names: Option<String>,
    pub target: Option<String>,
    /// The keys only the policy file has (`order`, `on_change`, `dedup`,
    /// `similarity`, …) as one JSON object: read by the file's own schema.
    pub policy_keys: Option<String>,
}

/// The crate's keywords of `o`.
fn keywords(o: NativeOptions) -> napi::Result<Keywords> {
    let mut k = Keywords::default();
    if let Some(text) = &o.policy_keys {
        let keys = parse(text, "settings")?;
        k.policy_keys = keys.as_object().cloned().unwrap_or_default();
    }
    k.policy = o.policy.map(Into::into);
    k.budget = o.budget;
    k.total_budget = o.total_budget;
    k.defer_over = o.defer_over;
    // `[alias, count]` pairs.
    k.server_budgets = o
        .server_budgets
        .unwrap_or_default()
        .into_iter()
        .filter_map(|pair| match <[String; 2]>::try_from(pair) {
            Ok([alias, n]) => Some((alias, n)),
            Err(_) => None,
        })
        .collect::<BTreeMap<_, _>>();
    k.deferred = o.deferred.unwrap_or_default();
    k.template = o.template;
    k.encoding = o.encoding;
    k.model = o.model;
    k.tokenizer = o.tokenizer;
    k.tool_names = o.tool_names;
    k.target = o.target;
    Ok(k)
}

/// An assembler (`Assembler` of index.js wraps it).
#[napi]
pub struct NativeAssembler {
    inner: Arc<Assembler>,
}

fn snapshots(servers: &[ClassInstance<'_, NativeServer>]) -> Vec<ServerSnapshot> {
    servers.iter().map(|s| s.snapshot.clone()).collect()
}

#[napi]
impl NativeAssembler {
    /// The policy file (if any) with the options over it, as the CLI puts
    /// its flags over `--policy`: the same settings give the same section.
    #[napi(constructor, catch_unwind)]
    pub fn new(
        options: NativeOptions,
        lock: Option<ClassInstance<'_, NativeLock>>,
    ) -> napi::Result<NativeAssembler> {
        let mut inner = keywords(options)?.assembler().map_err(to_js)?;
        if let Some(lock) = lock {
            inner = inner.lock(lock.lock().clone());
        }
        Ok(NativeAssembler {
            inner: Arc::new(inner),
        })
    }

    /// As the constructor, on libuv's thread pool: a tokenizer file is read
    /// and parsed there, and the event loop goes on meanwhile.
    #[napi(ts_return_type = "Promise<NativeAssembler>")]
    pub fn create(
        options: NativeOptions,
        lock: Option<ClassInstance<'_, NativeLock>>,
    ) -> napi::Result<AsyncTask<CreateTask>> {
        Ok(AsyncTask::new(CreateTask {
            keywords: Some(keywords(options)?),
            lock: lock.map(|l| l.lock().clone()),
        }))
    }

    /// Assembles the servers' section on the calling thread.
    #[napi(catch_unwind)]
    pub fn assemble(
        &self,
        servers: Vec<ClassInstance<'_, NativeServer>>,
    ) -> napi::Result<NativeAssembly> {
        let inner = self.inner.assemble(&snapshots(&servers)).map_err(to_js)?;
        Ok(NativeAssembly { inner })
    }

    /// Assembles the servers' section on libuv's thread pool: the event
    /// loop goes on meanwhile.
    #[napi(ts_return_type = "Promise<NativeAssembly>")]
    pub fn assemble_async(
        &self,
        servers: Vec<ClassInstance<'_, NativeServer>>,
    ) -> AsyncTask<AssembleTask> {
        AsyncTask::new(AssembleTask {
            assembler: Arc::clone(&self.inner),
            servers: snapshots(&servers),
        })
    }
}

/// One assembly off the event loop.
pub struct AssembleTask {
    assembler: Arc<Assembler>,
    servers: Vec<ServerSnapshot>,
}

impl Task for AssembleTask {
    type Output = Assembly;
    type JsValue = NativeAssembly;

    fn compute(&mut self) -> napi::Result<Assembly> {
        // A panic here would abort the process (no unwinding out of a libuv
        // thread): the promise is rejected instead, as the sync call throws.
        let run = std::panic::AssertUnwindSafe(|| self.assembler.assemble(&self.servers));
        match std::panic::catch_unwind(run) {
            Ok(result) => result.map_err(to_js),
            Err(_) => Err(napi::Error::from_reason(
                "mcp-preamble panicked while assembling",
            )),
        }
    }

    fn resolve(&mut self, _env: Env, inner: Assembly) -> napi::Result<NativeAssembly> {
        Ok(NativeAssembly { inner })
    }
}

/// One assembler made off the event loop.
pub struct CreateTask {
    keywords: Option<Keywords>,
    lock: Option<mcp_preamble::pin::Lock>,
}

impl Task for CreateTask {
    type Output = Assembler;
    type JsValue = NativeAssembler;

    fn compute(&mut self) -> napi::Result<Assembler> {
        let keywords = self.keywords.take().unwrap_or_default();
        let lock = self.lock.take();
        // As in AssembleTask: a panic rejects the promise.
        let run = std::panic::AssertUnwindSafe(|| keywords.assembler());
        let assembler = match std::panic::catch_unwind(run) {
            Ok(result) => result.map_err(to_js)?,
            Err(_) => {
                return Err(napi::Error::from_reason(
                    "mcp-preamble panicked while loading its settings",
                ));
            }
        };
        Ok(match lock {
            Some(lock) => assembler.lock(lock),
            None => assembler,
        })
    }

    fn resolve(&mut self, _env: Env, inner: Assembler) -> napi::Result<NativeAssembler> {
        Ok(NativeAssembler {
            inner: Arc::new(inner),
        })
    }
}

/// An assembled section and its report.
#[napi]
pub struct NativeAssembly {
    inner: Assembly,
}

#[napi]
impl NativeAssembly {
    /// The section.
    #[napi(getter)]
    pub fn text(&self) -> String {
        self.inner.text().to_string()
    }

    /// The report as the crate writes it (`Assembly::to_json`).
    #[napi]
    pub fn report_json(&self) -> String {
        self.inner.to_json()
    }

    /// The report exactly as `mcp-preamble preview --json` prints it for
    /// the same files (`Assembly::to_preview_json`).
    #[napi]
    pub fn preview_json(&self) -> String {
        self.inner.to_preview_json()
    }
}
