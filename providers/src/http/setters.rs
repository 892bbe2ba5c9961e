//! The builder setters both providers share.

/// The setters every provider's builder has for its HTTP client (`self.config`): extra headers
/// (`header:` completes their doc with the provider's own examples) and the three timeouts. One definition, so that the providers' builders cannot drift apart.
macro_rules! http_setters {
    (header: $example:literal) => {
        /// A header sent with every request
        #[doc = $example]
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.config.headers.push((name.into(), value.into()));
            self
        }

        /// The longest a whole call may take, streaming included (default: no limit; see
        /// [`read_timeout`](Self::read_timeout)).
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.config.timeout = Some(timeout);
            self
        }

        /// The longest connecting to the server may take (default 30 s).
        pub fn connect_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.config.connect_timeout = Some(timeout);
            self
        }

        /// The longest the server may stay silent: before the answer starts, or between two
        /// pieces of a streamed answer (default 300 s). Unlike [`timeout`](Self::timeout) it
        /// does not limit a long answer that keeps coming.
        pub fn read_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.config.read_timeout = Some(timeout);
            self
        }
    };
}
pub(crate) use http_setters;
