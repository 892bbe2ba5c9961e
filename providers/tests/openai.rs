//! The OpenAI-compatible client against a loopback server replaying recorded transcripts.
