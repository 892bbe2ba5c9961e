"""Writes a tiny llama-architecture GGUF model with seeded random weights, for
providers/tests/llama_server.rs: llama-server loads it and answers on every wire in a
few milliseconds. Its text is noise; the tests check the protocol, never the words.

    python make_model.py OUT.gguf CHAT_TEMPLATE.jinja

The tokenizer is GPT-2's byte-level BPE: the 256 bytes (so any text, and any string a
grammar asks for, can be written), a few merges (so the merge path runs too), and the
special tokens of the chat template. The chat template is passed in, not written here:
build.sh gives Qwen 3's, whose `<think>` reasoning and `<tool_call>` JSON format
llama.cpp's chat parser knows and tests (tests/test-chat.cpp), so `--jinja` answers are
split into reasoning, text and tool calls, and a forced tool choice is constrained by a
grammar to the tool's JSON schema.

Rules are planted in the random weights. llama.cpp's grammar for a required tool call
lets reasoning and content come first (`... content? "<tool_call>\n" ...`), and random
weights would write content until `max_tokens`, never the call. So a newline (the
generation prompt ends with one) is followed by `<think>`, then `Hm`, `</think>`, `Ok`,
`<tool_call>` and a newline, each by the next; and `</tool_call>` by `<|im_end|>` (the
end of the turn). `</tool_call>` is also preferred wherever the grammar allows it, or the
random weights would spell it a character at a time and the rule after it would not
fire. A tool answer is then reasoning, text and a call, as real reasoning models write
them: three items of one answer, on every wire. Inside the call, the grammar allows only
the schema's JSON and the random weights choose. Without a grammar the rules loop
(`<think>Hm</think>Ok<tool_call>\n<think>...`): reasoning, then text.
Each rule is a dimension of the residual stream that only its token sets (the
preference: every token) and no layer writes, read by one row of the output.
"""

import sys

import numpy as np
from gguf import GGUFWriter, TokenType

# Small enough to load and run at once, large enough that every tensor has a real shape.
N_EMBD = 64
N_HEAD = 4
N_LAYER = 2
N_FF = 128
N_CTX = 4096  # the Qwen template's tool prompt is ~1000 byte-level tokens
SEED = 20261127

# Pairs of byte-level pieces merged, in rank order ("Ġ" is the byte-level space).
MERGES = [
    ("Ġ", "t"), ("h", "e"), ("i", "n"), ("Ġt", "he"), ("e", "r"), ("a", "n"),
    ("o", "n"), ("Ġ", "a"), ("r", "e"), ("\"", ":"), ("{", "\""), ("\"", ","), ("O", "k"),
    ("H", "m"),
]
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Plain text to the tokenizer but single tokens, as in Qwen's vocabularies.
ADDED = ["<tool_call>", "</tool_call>", "<think>", "</think>"]
# The planted rules: (token, the token that follows it, the dimension carrying the rule).
NEWLINE = "\u010a"  # "\n", byte-level
RULES = [
    (NEWLINE, "<think>", N_EMBD - 1),
    ("<think>", "Hm", N_EMBD - 2),
    ("Hm", "</think>", N_EMBD - 3),
    ("</think>", "Ok", N_EMBD - 4),
    ("Ok", "<tool_call>", N_EMBD - 5),
    ("<tool_call>", NEWLINE, N_EMBD - 6),  # the grammar's call starts with "<tool_call>\n"
    ("</tool_call>", "<|im_end|>", N_EMBD - 7),
]
# The preference: a dimension every token sets, read by `</tool_call>`'s row.
PREFERRED = ("</tool_call>", N_EMBD - 8)


def bytes_to_unicode():
    """GPT-2's map of bytes to printable characters (as in its encoder.py)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def vocabulary():
    tokens = [bytes_to_unicode()[b] for b in range(256)]
    types = [TokenType.NORMAL] * len(tokens)
    for first, second in MERGES:
        tokens.append(first + second)
        types.append(TokenType.NORMAL)
    for special in SPECIALS:
        tokens.append(special)
        types.append(TokenType.CONTROL)
    for added in ADDED:
        tokens.append(added)
        types.append(TokenType.USER_DEFINED)
    assert len(set(tokens)) == len(tokens), "a token twice"
    return tokens, types


def main(out, template_path):
    with open(template_path, encoding="utf-8") as file:
        template = file.read()
    tokens, types = vocabulary()
    n_vocab = len(tokens)
    rng = np.random.default_rng(SEED)

    def weights(*shape):
        # Small, so activations stay finite through the layers.
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def ones(n):
        return np.ones(n, dtype=np.float32)

    writer = GGUFWriter(out, "llama")
    writer.add_name("hookchain-tiny-random")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(0)  # all F32

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([f"{first} {second}" for first, second in MERGES])
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_pad_token_id(tokens.index("<|endoftext|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(template)

    # Shapes as Hugging Face's (out, in); gguf stores them reversed, as llama.cpp reads them.
    embd = weights(n_vocab, N_EMBD)
    output = weights(n_vocab, N_EMBD)
    rule_dims = [dim for _, _, dim in RULES] + [PREFERRED[1]]
    # A rule's dimension is 0 but in its token's embedding, and only its follower reads it:
    # after the token, the normalized stream is mostly that dimension, and the follower's
    # logit (~40) beats every random one (~0.2); after any other, the rule is silent.
    embd[:, rule_dims] = 0.0
    output[:, rule_dims] = 0.0
    for token, follower, dim in RULES:
        embd[tokens.index(token), dim] = 1.0
        output[tokens.index(follower), dim] = 5.0
    # ~2 once normalized (the stream's other values are ~0.02), so a logit of ~6: above any
    # random one, below a rule's.
    embd[:, PREFERRED[1]] = 0.05
    output[tokens.index(PREFERRED[0]), PREFERRED[1]] = 3.0
    writer.add_tensor("token_embd.weight", embd)
    for layer in range(N_LAYER):
        blk = f"blk.{layer}"
        writer.add_tensor(f"{blk}.attn_norm.weight", ones(N_EMBD))
        for name in ("attn_q", "attn_k", "attn_v"):
            writer.add_tensor(f"{blk}.{name}.weight", weights(N_EMBD, N_EMBD))
        # The layers write nothing into the rules' dimensions (the rows of their outputs).
        attn_output = weights(N_EMBD, N_EMBD)
        attn_output[rule_dims, :] = 0.0
        writer.add_tensor(f"{blk}.attn_output.weight", attn_output)
        writer.add_tensor(f"{blk}.ffn_norm.weight", ones(N_EMBD))
        writer.add_tensor(f"{blk}.ffn_gate.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"{blk}.ffn_up.weight", weights(N_FF, N_EMBD))
        ffn_down = weights(N_EMBD, N_FF)
        ffn_down[rule_dims, :] = 0.0
        writer.add_tensor(f"{blk}.ffn_down.weight", ffn_down)
    writer.add_tensor("output_norm.weight", ones(N_EMBD))
    writer.add_tensor("output.weight", output)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make_model.py OUT.gguf CHAT_TEMPLATE.jinja")
    main(sys.argv[1], sys.argv[2])
