//! A 20-member `chain!` of `#[hook]` functions, with no `recursion_limit` attribute, runs every
//! hook once per model call.

use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::prelude::*;
use hookchain::{chain, hook};

static BEFORE: AtomicUsize = AtomicUsize::new(0);
static AFTER: AtomicUsize = AtomicUsize::new(0);

#[hook(before_model)]
fn before_0() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_1(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_2() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_3(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_4() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_5(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_6() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_7(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_8() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_9(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_10() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_11(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_12() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_13(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_14() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_15(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_16() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_17(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

#[hook(before_model)]
fn before_18() {
    BEFORE.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_model)]
async fn after_19(response: &mut ModelResponse) {
    AFTER.fetch_add(1, Ordering::Relaxed);
    response.message.content.push_text(".");
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hello")]))
        .chain(chain![
            before_0, after_1, before_2, after_3, before_4, after_5, before_6, after_7, before_8,
            after_9, before_10, after_11, before_12, after_13, before_14, after_15, before_16,
            after_17, before_18, after_19,
        ])
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("hello.........."));
    assert_eq!(BEFORE.load(Ordering::Relaxed), 10);
    assert_eq!(AFTER.load(Ordering::Relaxed), 10);
}
