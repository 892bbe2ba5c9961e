//! Serve [hookchain](https://docs.rs/hookchain) agents over HTTP: runs streamed as
//! server-sent events in the [AG-UI](https://docs.ag-ui.com) protocol.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agui;
