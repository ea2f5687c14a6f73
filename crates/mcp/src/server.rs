//! The MCP side: what `initialize` (or `server/discover`) says about the
//! server, the tools list, and each `tools/call` handed to the synchronous
//! core on a blocking thread.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ContentBlock, Implementation, ListToolsResult, MetaObject, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::calls::Desk;
use crate::catalog::{self, Refused, Setting};
use crate::delivery::{Ledger, TOKEN_KEY};

pub struct Server {
    desk: Arc<Desk>,
    ledger: Arc<Ledger>,
    tools: Vec<Tool>,
}

impl Server {
    pub fn new(desk: Desk, ledger: Arc<Ledger>) -> Server {
        let tools = catalog::tools(&Setting {
            dir: &desk.dir,
            cap: desk.cap,
        });
        Server {
            desk: Arc::new(desk),
            ledger,
            tools,
        }
    }

    /// What the client may show the model about the server as a whole.
    fn instructions(&self) -> String {
        let d = &self.desk;
        format!(
            "fsview's file tools: read shows a file and records what you saw; edit and write change a file only if you have seen it and it is still what you saw, so no change anyone else made is lost; changed lists the files that changed since you saw them; context gives the project's instructions. Read a file before you change it. Relative paths are taken from {}. Session {:?} of {}.",
            d.dir.display(),
            d.session.sid(),
            d.session_file.display()
        )
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new(fsview::mcp::TOOL, env!("CARGO_PKG_VERSION"))
            .with_title("fsview")
            .with_description(
                "Gated file tools: a read that records what the model saw, an edit and a write that refuse stale changes",
            );
        info.instructions = Some(self.instructions());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = match catalog::parse(&request.name, request.arguments.as_ref()) {
            Ok(call) => call,
            Err(Refused::UnknownTool(m)) => return Err(ErrorData::invalid_params(m, None)),
            Err(Refused::Arguments(m)) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(m)]).into())
            }
        };
        // A result the client already has may still be recording what it
        // showed; this call must see that record (see crate::delivery).
        self.ledger.settled().await;
        let desk = self.desk.clone();
        let name = call.name();
        let answer = match tokio::task::spawn_blocking(move || desk.call(call)).await {
            Ok(a) => a,
            Err(e) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "{name} failed inside fsview-mcp ({e}); the file is as it was or as the change left it: read it to see"
                ))])
                .into())
            }
        };
        let mut content = vec![ContentBlock::text(answer.text)];
        if let Some(news) = answer.news {
            content.push(ContentBlock::text(news));
        }
        let mut result = if answer.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        let mut meta = MetaObject::new();
        meta.0.extend(answer.meta);
        if let Some(d) = answer.delivery {
            let ct = context.ct.clone();
            if let Some(token) = self
                .ledger
                .leave(context.id.clone(), || ct.is_cancelled(), d)
            {
                meta.0.insert(TOKEN_KEY.into(), token.into());
            }
        }
        if !meta.0.is_empty() {
            result.meta = Some(meta);
        }
        Ok(result.into())
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        if let Some(id) = &notification.request_id {
            self.ledger.forget(id);
        }
    }
}
