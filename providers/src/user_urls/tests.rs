//! The classification of URLs (every range and form), the policy, and the errors.

use hookchain_core::message::{ContentPart, ResourceLink};
use hookchain_core::{Message, ModelErrorKind, ModelRequest, ToolResult};

use super::UserUrls;
use super::classify::{Kind, classify};

/// The kind of each URL, with a message naming the ones that differ.
fn assert_kinds(kind: Kind, urls: &[&str]) {
    let wrong: Vec<_> = urls
        .iter()
        .map(|url| (*url, classify(url).kind))
        .filter(|(_, got)| *got != kind)
        .collect();
    assert!(wrong.is_empty(), "expected {kind:?}, got: {wrong:?}");
}

#[test]
fn data_urls_are_inline_and_not_parsed() {
    assert_kinds(
        Kind::Inline,
        &[
            "data:image/png;base64,iVBORw0KGgo=",
            "DATA:image/png;base64,iVBORw0KGgo=",
            // Not parsed: an inline image may be large, and holds nothing to fetch.
            "data:image/png;base64,not \\ really base64",
        ],
    );
}

#[test]
fn public_web_urls_pass() {
    assert_kinds(
        Kind::Public,
        &[
            "https://example.com/cat.png",
            "HTTPS://EXAMPLE.COM/cat.png",
            "http://example.com:8080/cat.png?size=2#top",
            "https://user:pw@example.com/cat.png",
            // Credentials that look like an address do not make the host one.
            "http://169.254.169.254@example.com/",
            "https://8.8.8.8/a.png",
            "https://[2606:4700:4700::1111]/a.png",
            "https://bücher.example/a.png",
            "https://storage.googleapis.com/bucket/a.png",
            // Public addresses next to private ranges.
            "http://100.63.255.255/",
            "http://100.128.0.0/",
            "http://172.15.255.255/",
            "http://172.32.0.0/",
            "http://169.253.255.255/",
            "http://192.0.2.1/",
            "http://198.20.0.1/",
            "http://223.255.255.255/",
            "http://[2001:db8::1]/",
            "http://[::ffff:8.8.8.8]/",
            // A name that merely contains a private suffix.
            "https://internal.example.com/",
            "https://mylocal.example/",
            "https://notlocalhost.com/",
        ],
    );
}

#[test]
fn private_ipv4_ranges_are_refused() {
    assert_kinds(
        Kind::PrivateNetwork,
        &[
            // Loopback, "this network", unspecified.
            "http://127.0.0.1/",
            "http://127.255.255.254/",
            "http://0.0.0.0/",
            "http://0.1.2.3/",
            // RFC 1918.
            "http://10.0.0.1/",
            "http://10.255.255.255/",
            "http://172.16.0.1/",
            "http://172.31.255.255/",
            "http://192.168.1.1/",
            // Link-local: the metadata services of AWS, GCP, Azure, Oracle, DigitalOcean.
            "http://169.254.169.254/latest/meta-data/",
            "http://169.254.0.1/",
            // Shared address space (CGNAT), Alibaba's metadata.
            "http://100.64.0.1/",
            "http://100.100.100.200/",
            "http://100.127.255.255/",
            // IETF protocol assignments, benchmarking, multicast, reserved, broadcast.
            "http://192.0.0.170/",
            "http://198.18.0.1/",
            "http://198.19.255.255/",
            "http://224.0.0.1/",
            "http://239.255.255.250/",
            "http://240.0.0.1/",
            "http://255.255.255.255/",
        ],
    );
}

#[test]
fn every_written_form_of_an_ipv4_address_is_read_as_the_address() {
    assert_kinds(
        Kind::PrivateNetwork,
        &[
            // Ports, credentials, uppercase schemes, a trailing dot.
            "http://169.254.169.254:80/",
            "http://a@169.254.169.254/",
            "http://user:pass@169.254.169.254:8080/x",
            "http://a@b@169.254.169.254/",
            "HTTP://169.254.169.254/",
            "hTtPs://10.0.0.1/",
            "http://169.254.169.254./",
            // Decimal, hexadecimal, octal, short forms.
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0x7f.1/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://2852039166/",
            "http://0xa9.0xfe.0xa9.0xfe/",
            // Percent-encoded and full-width digits.
            "http://%31%32%37.0.0.1/",
            "http://１２７.０.０.１/",
        ],
    );
}

#[test]
fn private_ipv6_addresses_are_refused_in_brackets_with_ports() {
    assert_kinds(
        Kind::PrivateNetwork,
        &[
            "http://[::1]/",
            "http://[::1]:8080/",
            "http://[0:0:0:0:0:0:0:1]/",
            "http://[::]/",
            // Unique local (AWS's IPv6 metadata), link-local, site-local, multicast.
            "http://[fd00:ec2::254]/latest/meta-data/",
            "http://[fc00::1]/",
            "http://[FE80::1]/",
            "http://[febf::1]/",
            "http://[fec0::1]/",
            "http://[ff02::1]/",
            // IPv4 in IPv6: mapped, compatible, NAT64, local NAT64, 6to4.
            "http://[::ffff:169.254.169.254]/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[::ffff:127.0.0.1]:80/",
            "http://[::10.0.0.1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[64:ff9b:1::1]/",
            "http://[2002:a9fe:a9fe::1]/",
            "http://user@[::1]/",
        ],
    );
}

#[test]
fn local_names_are_refused() {
    assert_kinds(
        Kind::PrivateNetwork,
        &[
            "http://localhost/",
            "http://LOCALHOST:11434/",
            "http://localhost./",
            "http://app.localhost/",
            "http://printer.local/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://metadata/computeMetadata/v1/",
            "http://wiki/",
            "http://router.home.arpa/",
            "http://nas.lan/",
            "http://box.localdomain/",
            "http://git.corp/",
            "http://a@metadata.google.internal./",
            // International forms of the same names.
            "http://ｌｏｃａｌｈｏｓｔ/",
        ],
    );
}

#[test]
fn cloud_storage_is_refused_by_scheme() {
    assert_kinds(
        Kind::CloudStorage,
        &[
            "s3://bucket/photos/cat.png",
            "S3://bucket/cat.png",
            "s3a://bucket/cat.png",
            "gs://bucket/cat.png",
            "gcs://bucket/cat.png",
            "az://container/cat.png",
            "abfs://container@account.dfs.core.windows.net/cat.png",
            "abfss://container@account.dfs.core.windows.net/cat.png",
            "wasbs://container@account.blob.core.windows.net/cat.png",
        ],
    );
}

#[test]
fn other_schemes_are_refused() {
    assert_kinds(
        Kind::OtherScheme,
        &[
            "file:///etc/passwd",
            "FILE:///etc/passwd",
            "file://localhost/etc/passwd",
            "ftp://example.com/a.png",
            "gopher://127.0.0.1:6379/_INFO",
            "javascript:alert(1)",
            "blob:https://example.com/uuid",
            "mailto:a@example.com",
        ],
    );
}

#[test]
fn what_does_not_parse_or_may_parse_differently_is_refused() {
    assert_kinds(
        Kind::Unparsable,
        &[
            "",
            "cat.png",
            "/images/cat.png",
            "//169.254.169.254/",
            "http://",
            "http:///cat.png",
            "http://[::1/",
            "http://[fe80::1%25eth0]/",
            "http://exa mple.com/",
            "http://256.256.256.256/",
            "http://example.0x7f/",
            "http://example.1/",
            "http:example.com/a.png",
            "http:/example.com/a.png",
            "https:///example.com/a.png",
            // Parsers disagree on these: the URL standard reads one host, others another.
            "http://example.com\\@169.254.169.254/",
            "http://169.254.169.254 @example.com/",
            "http://169.254.169.254\t@example.com/",
            "http://exam\nple.com/",
            " http://example.com/",
            "https://example.com/a b.png",
        ],
    );
}

#[test]
fn the_scheme_and_host_are_read_normalized() {
    let url = classify("HTTP://User:Secret@[::FFFF:169.254.169.254]:80/x?token=y");
    assert_eq!(url.scheme, "http");
    assert_eq!(
        url.host.unwrap().to_string(),
        "[::ffff:169.254.169.254]",
        "an address, read as one"
    );
    let url = classify("s3://My-Bucket/a.png");
    assert_eq!(
        (url.scheme.as_str(), url.host.unwrap().to_string()),
        ("s3", "my-bucket".to_owned())
    );
}

/// A request whose user message holds an image at `url`.
fn with_image(url: &str) -> ModelRequest {
    ModelRequest::new(vec![
        Message::system("You describe pictures."),
        Message::user(vec![
            ContentPart::text("What is this?"),
            ContentPart::image_url(url),
        ]),
    ])
}

fn allowed(policy: &UserUrls, url: &str) -> bool {
    policy.check("openai", &with_image(url)).is_ok()
}

#[test]
fn the_default_sends_inline_and_public_images_only() {
    let policy = UserUrls::default();
    assert_eq!(policy, UserUrls::new());
    for url in [
        "data:image/png;base64,iVBORw0KGgo=",
        "https://example.com/cat.png",
    ] {
        assert!(allowed(&policy, url), "{url}");
    }
    for url in [
        "s3://bucket/cat.png",
        "gs://bucket/cat.png",
        "http://169.254.169.254/",
        "http://localhost:8080/cat.png",
        "file:///etc/passwd",
        "not a url",
    ] {
        assert!(!allowed(&policy, url), "{url}");
    }
    // Inline images and text-only requests have nothing to check.
    let inline = ModelRequest::new(vec![Message::user(vec![ContentPart::image_base64(
        "image/png",
        "iVBORw0KGgo=",
    )])]);
    assert!(policy.check("openai", &inline).is_ok());
    assert!(
        policy
            .check("openai", &ModelRequest::new(vec![Message::user("hi")]))
            .is_ok()
    );
}

#[test]
fn each_opt_in_allows_its_kind_and_no_other() {
    let storage = UserUrls::new().allow_cloud_storage();
    assert!(allowed(&storage, "s3://bucket/cat.png"));
    assert!(allowed(&storage, "gs://bucket/cat.png"));
    assert!(!allowed(&storage, "http://169.254.169.254/"));
    assert!(!allowed(&storage, "file:///etc/passwd"));

    let private = UserUrls::new().allow_private_network();
    assert!(allowed(&private, "http://169.254.169.254/"));
    assert!(allowed(&private, "http://localhost:11434/cat.png"));
    assert!(allowed(&private, "http://[fd00::1]/"));
    assert!(!allowed(&private, "s3://bucket/cat.png"));
    assert!(!allowed(&private, "file:///etc/passwd"));
    assert!(!allowed(&private, "http://a\\@b/"), "never the ambiguous");
}

#[test]
fn allowed_hosts_match_whole_names_and_addresses_in_any_form() {
    let policy = UserUrls::new()
        .allow_host("Wiki.Corp.")
        .allow_host("10.0.0.7")
        .allow_host("[FD00::7]")
        .allow_host("uploads");
    for url in [
        "http://wiki.corp/a.png",
        "https://WIKI.corp:8443/a.png",
        "http://167772167/a.png",
        "http://[fd00:0:0:0:0:0:0:7]/a.png",
        "s3://uploads/a.png",
        "gs://uploads/a.png",
        "http://uploads/a.png",
    ] {
        assert!(allowed(&policy, url), "{url}");
    }
    for url in [
        "http://sub.wiki.corp/a.png",
        "http://10.0.0.8/a.png",
        "s3://downloads/a.png",
        "file://uploads/a.png",
    ] {
        assert!(!allowed(&policy, url), "{url}");
    }
}

#[test]
fn an_allowed_scheme_passes_whatever_its_host() {
    let policy = UserUrls::new().allow_scheme("S3:").allow_scheme("file");
    assert!(allowed(&policy, "s3://bucket/a.png"));
    assert!(!allowed(&policy, "gs://bucket/a.png"));
    assert!(allowed(&policy, "file:///srv/a.png"));
    assert!(!allowed(&policy, "http://127.0.0.1/"));
    let http = UserUrls::new().allow_scheme("http");
    assert!(allowed(&http, "http://127.0.0.1/"));
    assert!(!allowed(&http, "https://127.0.0.1/"));
}

#[test]
fn only_user_messages_are_checked() {
    let policy = UserUrls::new();
    let metadata = "http://169.254.169.254/latest/meta-data/";
    let request = ModelRequest::new(vec![
        Message::system(vec![ContentPart::image_url(metadata)]),
        Message::user("Look at what the tool found."),
        Message::assistant(vec![ContentPart::image_url(metadata)]),
        Message::tool(ToolResult::ok(
            "call_1",
            vec![ContentPart::image_url("s3://bucket/found.png")],
        )),
    ]);
    assert!(policy.check("openai", &request).is_ok());
    // A user's resource link is sent as text, which no provider fetches.
    let link = ModelRequest::new(vec![Message::user(vec![ContentPart::from(
        ResourceLink::new("s3://bucket/a.txt", "a.txt"),
    )])]);
    assert!(policy.check("openai", &link).is_ok());
}

#[test]
fn the_error_names_the_kind_the_scheme_the_host_and_the_setting_never_the_url() {
    let policy = UserUrls::new();
    let cases = [
        (
            "s3://bucket/private/cat.png?X-Amz-Signature=s3cret",
            "`s3://bucket`",
            "allow_cloud_storage()",
        ),
        (
            "http://admin:s3cret@169.254.169.254/latest/meta-data/iam?s3cret",
            "`http://169.254.169.254`",
            "allow_private_network()",
        ),
        (
            "file:///home/s3cret/cat.png",
            "`file:`",
            "allow_scheme(\"file\")",
        ),
        (
            "http://s3cret\\@169.254.169.254/",
            "does not parse",
            "inline",
        ),
    ];
    for (url, shown, setting) in cases {
        let mut request = with_image("https://example.com/a.png");
        request
            .messages
            .push(Message::user(vec![ContentPart::image_url(url)]));
        let error = policy.check("aws.bedrock", &request).unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
        assert!(!error.is_retryable());
        let message = error.to_string();
        assert!(
            message.starts_with("aws.bedrock request refused before sending"),
            "{message}"
        );
        assert!(message.contains("index 2"), "{message}");
        assert!(message.contains(shown), "{message}");
        assert!(message.contains(setting), "{message}");
        assert!(!message.contains("s3cret"), "{message}");
        assert!(!format!("{error:?}").contains("s3cret"), "{error:?}");
    }
}
