//! The rules of namespaces: `list_namespace` lists the ids that `ThreadId::namespaced` made
//! in one namespace, and no other, in the order of their bytes, a page at a time.

use hookchain::thread_store::ThreadStore;
use hookchain::{Thread, ThreadId};

/// The ids `namespaces` saves: four of the namespace `acme` (one whose local id holds `/`),
/// and around them, in byte order, ids that share a prefix with theirs: un-namespaced ids just
/// before and after (`acme`, `acme-x`: `-` sorts before `/`; `acme0`: `0` after it), and the
/// namespaces `acm`, `acme2` and `acmf`.
fn ids() -> Vec<ThreadId> {
    let namespaced = |namespace, id| ThreadId::namespaced(namespace, id).unwrap();
    vec![
        ThreadId::new("acme"),
        ThreadId::new("acme-x"),
        namespaced("acme", "1"),
        namespaced("acme", "b"),
        namespaced("acme", "x/y"),
        namespaced("acme", "é"),
        ThreadId::new("acme0"),
        namespaced("acm", "1"),
        namespaced("acme2", "1"),
        namespaced("acmf", "1"),
    ]
}

/// One page of the namespace's ids, as text.
async fn page(
    store: &impl ThreadStore,
    namespace: &str,
    after: Option<&str>,
    limit: usize,
) -> Vec<String> {
    let after = after.map(ThreadId::new);
    let page = store
        .list_namespace(namespace, after.as_ref(), limit)
        .await
        .unwrap();
    page.iter().map(|id| id.as_str().to_owned()).collect()
}

/// `list_namespace` returns the ids of the namespace only (not those of a namespace it is the
/// prefix of, nor un-namespaced ids next to them), in the order of their bytes, a page at a
/// time, an empty page at the end; after an id before the namespace, from its first; after one
/// beyond it, none.
pub(crate) async fn namespaces(store: &impl ThreadStore) {
    for id in ids() {
        assert_eq!(store.save(&Thread::<()>::with_id(id), 0).await.unwrap(), 1);
    }

    let acme = ["acme/1", "acme/b", "acme/x/y", "acme/é"];
    assert_eq!(page(store, "acme", None, 10).await, acme);
    assert_eq!(page(store, "acme", None, 2).await, acme[..2]);
    assert_eq!(page(store, "acme", Some("acme/b"), 2).await, acme[2..]);
    assert_eq!(
        page(store, "acme", Some("acme/é"), 2).await,
        [] as [&str; 0]
    );
    assert_eq!(page(store, "acme", Some("a"), 10).await, acme);
    assert_eq!(page(store, "acme", Some("acme"), 10).await, acme);
    assert_eq!(
        page(store, "acme", Some("acme2/1"), 10).await,
        [] as [&str; 0]
    );
    assert_eq!(page(store, "acme", None, 0).await, [] as [&str; 0]);
    for (namespace, ids) in [
        ("acme2", &["acme2/1"][..]),
        ("acm", &["acm/1"]),
        ("acmf", &["acmf/1"]),
        ("acme-x", &[]),
        ("acme0", &[]),
        ("nobody", &[]),
    ] {
        assert_eq!(page(store, namespace, None, 10).await, ids, "{namespace}");
    }

    for id in ids() {
        assert!(store.delete(&id).await.unwrap());
    }
}
