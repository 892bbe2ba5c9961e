# Extracts the vectors of agentevals' trajectory-match tests into golden/agentevals_*.json:
#   python3 extract_agentevals.py python/tests/test_trajectory.py > agentevals_test_trajectory.json
# Read by ../golden_agentevals.rs. The library and its imports are stubbed (no langchain needed):
# each evaluator call records its configuration (a callable override by its name, ported in
# Rust), the messages as the test wrote them, and the score the test asserts on the result.
"""Runs agentevals' trajectory-match tests with the library stubbed out, recording for each
evaluator call its configuration, inputs and the score the test asserts."""
import sys, types, json, asyncio, inspect

records = []
current = {}

class Rec:
    def __init__(self, cfg, outputs, refs):
        self.cfg, self.outputs, self.refs = cfg, outputs, refs
        self.entry = {"test": current["name"], "params": current["params"], "cfg": cfg,
                      "outputs": outputs, "reference_outputs": refs, "expected": None}
        records.append(self.entry)
    def __eq__(self, other):  # `assert evaluator(...) == EvaluatorResult(score=...)`
        self.entry["expected"] = other["score"]
        return True
    def __getitem__(self, key):  # `evaluator(...)["score"]`, compared or negated by the test
        assert key == "score"
        return Score(self.entry)

class Score:
    def __init__(self, entry): self.entry = entry
    def __eq__(self, other): self.entry["expected"] = other; return True
    def __bool__(self):
        # Only the two override tests assert truthiness: falsy for their evaluator without
        # overrides (`assert not`), truthy for the one with them (`assert result["score"]`).
        answer = "tool_args_match_overrides" in self.entry["cfg"]
        self.entry["expected"] = answer
        return answer

def cfg_of(kw):
    out = {}
    for k, v in kw.items():
        if k == "tool_args_match_overrides":
            out[k] = {name: (f"<callable {getattr(o, '__name__', 'lambda')}>" if callable(o) else o)
                      for name, o in v.items()}
        else:
            out[k] = v
    return out

def create(**kw):
    cfg = cfg_of(kw)
    def ev(*, outputs, reference_outputs, inputs=None, **_):
        return Rec(cfg, norm(outputs), norm(reference_outputs))
    return ev

def create_async(**kw):
    cfg = cfg_of(kw)
    async def ev(*, outputs, reference_outputs, inputs=None, **_):
        return Rec(cfg, norm(outputs), norm(reference_outputs))
    return ev

def norm(msgs):
    return json.loads(json.dumps(msgs))

def ChatCompletionMessage(**kw): return dict(kw)
def EvaluatorResult(**kw): return dict(kw)
def HumanMessage(content, **kw): return {"role": "user", "content": content}
def ToolMessage(content, tool_call_id, **kw): return {"role": "tool", "content": content, "tool_call_id": tool_call_id}
def AIMessage(content, tool_calls=None, **kw):
    m = {"role": "assistant", "content": content}
    if tool_calls:
        m["tool_calls"] = [{"id": c["id"], "function": {"name": c["name"], "arguments": json.dumps(c["args"])}} for c in tool_calls]
    return m

def mod(name, **attrs):
    m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m
mod("agentevals"); mod("agentevals.trajectory")
mod("agentevals.trajectory.match", create_trajectory_match_evaluator=create,
    create_async_trajectory_match_evaluator=create_async)
mod("agentevals.types", EvaluatorResult=EvaluatorResult, ChatCompletionMessage=ChatCompletionMessage)
mod("langchain_core"); mod("langchain_core.messages", AIMessage=AIMessage, HumanMessage=HumanMessage, ToolMessage=ToolMessage)

class Mark:
    def __getattr__(self, name):
        if name == "parametrize":
            def p(names, values):
                def d(f):
                    f.__dict__.setdefault("params", []).insert(0, (names, values)); return f
                return d
            return p
        return lambda f: f
mod("pytest", mark=Mark())

def run(path):
    src = open(path).read()
    ns = {}
    exec(compile(src, path, "exec"), ns)
    for name, f in list(ns.items()):
        if not name.startswith("test_"): continue
        combos = [dict()]
        for names, values in f.__dict__.get("params", []):
            names = [n.strip() for n in names.split(",")]
            combos = [dict(c, **dict(zip(names, v if isinstance(v, tuple) else (v,)))) for c in combos for v in values]
        for params in combos:
            current.update(name=name, params=params)
            r = f(**params)
            if inspect.iscoroutine(r): asyncio.run(r)

run(sys.argv[1])
out = [{"test": e["test"], "params": e["params"], "config": e["cfg"],
        "expected_score": e["expected"], "outputs": e["outputs"],
        "reference_outputs": e["reference_outputs"]} for e in records]
sys.stdout.write(json.dumps(out, separators=(",", ":"), ensure_ascii=False))
