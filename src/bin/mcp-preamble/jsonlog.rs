//! `serve --log-format json`: one JSON object per log line, for a log
//! collector: `timestamp`, `level`, `target`, `message`, the event's
//! fields by name, and `spans` (the spans it is in, as the text format
//! names them: `upstream{alias=billing}`).

use std::fmt;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The log's line format: the text one, or JSON.
pub enum LineFormat {
    Text(Format<Full, SystemTime>),
    Json,
}

impl LineFormat {
    pub fn new(json: bool) -> LineFormat {
        match json {
            true => LineFormat::Json,
            false => LineFormat::Text(Format::default().with_ansi(false)),
        }
    }
}

impl<S, N> FormatEvent<S, N> for LineFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let LineFormat::Text(text) = self else {
            return json_line(ctx, writer, event);
        };
        text.format_event(ctx, writer.by_ref(), event)
    }
}

fn json_line<S, N>(
    ctx: &FmtContext<'_, S, N>,
    mut writer: Writer<'_>,
    event: &Event<'_>,
) -> fmt::Result
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    let mut line = Map::new();
    let mut time = String::new();
    SystemTime.format_time(&mut Writer::new(&mut time))?;
    let meta = event.metadata();
    line.insert("timestamp".into(), Value::String(time));
    line.insert("level".into(), Value::String(meta.level().to_string()));
    line.insert("target".into(), Value::String(meta.target().to_string()));
    let mut fields = Fields(Map::new());
    event.record(&mut fields);
    let message = fields
        .0
        .remove("message")
        .unwrap_or(Value::String(String::new()));
    line.insert("message".into(), message);
    let mut spans = Vec::new();
    if let Some(scope) = ctx.event_scope() {
        for span in scope.from_root() {
            let ext = span.extensions();
            let shown = ext
                .get::<FormattedFields<N>>()
                .filter(|f| !f.is_empty())
                .map_or_else(
                    || span.name().to_string(),
                    |f| format!("{}{{{f}}}", span.name()),
                );
            spans.push(Value::String(shown));
        }
    }
    if !spans.is_empty() {
        line.insert("spans".into(), Value::Array(spans));
    }
    for (name, value) in fields.0 {
        line.entry(name).or_insert(value);
    }
    writeln!(writer, "{}", Value::Object(line))
}

/// An event's fields as JSON values.
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), Value::String(format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .insert(field.name().into(), Value::String(value.into()));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
}
