// AG-UI's own TypeScript client (`@ag-ui/client` from npm), driven by a Rust test: one
// `HttpAgent` for the whole conversation, commands read as JSON lines on stdin (so that the
// test can restart the server between two of them), one JSON line written per command.
//
//   node client.cjs <url> <threadId>
//   {"ask": "text", "runId": "r1"}                          -> a new turn
//   {"resume": [{"interruptId", "status", "payload"}], "runId": "r2"}
//
// Each answer: {"events": [every event, as the client validated and applied it],
// "messages": [the client's conversation after the run], "error": "…" if the run failed}.
// The client checks the protocol itself (its `verifyEvents`: the order of events, nothing
// left open), so a protocol error is an `error` here.

const readline = require("node:readline");
const { HttpAgent } = require("@ag-ui/client");

const [url, threadId] = process.argv.slice(2);
const agent = new HttpAgent({ url, threadId });
let next = 0;

async function run(command) {
  const events = [];
  const subscriber = {
    onEvent: ({ event }) => {
      events.push(event);
    },
  };
  try {
    if (command.ask !== undefined) {
      agent.messages.push({ id: `user-${next++}`, role: "user", content: command.ask });
      await agent.runAgent({ runId: command.runId }, subscriber);
    } else {
      await agent.runAgent({ runId: command.runId, resume: command.resume }, subscriber);
    }
    return { events, messages: agent.messages };
  } catch (error) {
    return { events, messages: agent.messages, error: String(error && error.message || error) };
  }
}

const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on("line", (line) => {
  if (!line.trim()) return;
  queue = queue.then(async () => {
    const answer = await run(JSON.parse(line));
    process.stdout.write(JSON.stringify(answer) + "\n");
  });
});
lines.on("close", () => queue.then(() => process.exit(0)));
