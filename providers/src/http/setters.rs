//! The builder setters both providers share.

/// The setters every provider's builder has for its HTTP client (`self.config`): extra headers
/// (`header:` completes their doc with the provider's own examples), the three timeouts and the
/// bounds on what is read. One definition, so that the providers' builders cannot drift apart.
macro_rules! http_setters {
    (header: $example:literal) => {
        /// A header sent with every request
        #[doc = $example]
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.config.headers.push((name.into(), value.into()));
            self
        }

        /// The longest an unstreamed call may take, from sending the request to the answer's
        /// last byte (default 600 s; `None`: no limit). Streamed calls (`Model::stream`, and
        /// `invoke` on a [`streaming`](Self::streaming) model), however long, are bounded by
        /// [`read_timeout`](Self::read_timeout) instead. Past it, the call fails with a
        /// `Timeout` error (retryable).
        pub fn timeout(mut self, timeout: impl Into<Option<std::time::Duration>>) -> Self {
            self.config.timeout = timeout.into();
            self
        }

        /// The longest connecting to the server may take (default 30 s; `None`: no limit).
        pub fn connect_timeout(mut self, timeout: impl Into<Option<std::time::Duration>>) -> Self {
            self.config.connect_timeout = timeout.into();
            self
        }

        /// The longest the server may stay silent: before the answer starts, or between two
        /// pieces of an answer, streamed or not (default 300 s; `None`: no limit). Unlike
        /// [`timeout`](Self::timeout) it does not limit a long answer that keeps coming. Past
        /// it, the call (or the stream) fails with a `Timeout` error (retryable).
        pub fn read_timeout(mut self, timeout: impl Into<Option<std::time::Duration>>) -> Self {
            self.config.read_timeout = timeout.into();
            self
        }

        /// The largest unstreamed answer read, in bytes (default 32 MiB, far above any real
        /// answer). A larger answer is not read past the limit (not at all if the server
        /// announces its length) and fails with a `MalformedResponse` error naming the limit.
        pub fn max_answer_size(mut self, bytes: usize) -> Self {
            self.config.limits.answer = bytes;
            self
        }

        /// How much of an error's body is read, in bytes (default 64 KiB); the rest is not
        /// read. The error is classified from what was read and the status.
        pub fn max_error_size(mut self, bytes: usize) -> Self {
            self.config.limits.error_body = bytes;
            self
        }

        /// The longest line of a streamed answer, in bytes (default 8 MiB: a chunk carrying a
        /// whole image fits). A longer line is not buffered past the limit; the stream fails
        /// with a `MalformedResponse` error naming the limit.
        pub fn max_line_size(mut self, bytes: usize) -> Self {
            self.config.limits.line = bytes;
            self
        }

        /// The largest event of a streamed answer (its data lines together), in bytes
        /// (default 8 MiB). A larger event fails the stream with a `MalformedResponse` error
        /// naming the limit.
        pub fn max_event_size(mut self, bytes: usize) -> Self {
            self.config.limits.event = bytes;
            self
        }
    };
}
pub(crate) use http_setters;
