// The same loop in JavaScript, with nothing but Node's built-in fetch (Node 18+): an external agent.
//
//     sandbox run --agent external -O command="node examples/agents/fetch_loop.mjs"
//
// It reads its task (one JSON line) from stdin, POSTs chat completions to
// $OPENAI_BASE_URL/chat/completions (the sandbox's model proxy) with the task's tools, and runs
// each tool call the model asks for with POST $SANDBOX_TOOLS_URL/call, passing the call's id.
// It ends when Finish is accepted, or prints {"answer": ...} when the model answers in plain
// text. No package is needed.

const SYSTEM =
  "You solve the user's task with the functions offered. Call one function at a time. " +
  "When you have the answer, call Finish with return_type give_answer and the final answer; " +
  "if the task cannot be done, call Finish with return_type give_up_and_restart.";
const MAX_TURNS = 30;

async function readTask() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return JSON.parse(text.split("\n")[0]);
}

async function post(url, body, headers = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

async function complete(messages, tools) {
  const { status, text } = await post(
    `${process.env.OPENAI_BASE_URL}/chat/completions`,
    { model: process.env.OPENAI_MODEL || "sandbox", messages, tools },
    { Authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
  );
  if (status !== 200) throw new Error(`the model answered ${status}: ${text}`);
  return JSON.parse(text).choices[0].message;
}

function accepted(answer) {
  try {
    const data = JSON.parse(answer);
    return typeof data === "object" && data !== null && "response" in data && !data.error;
  } catch {
    return false; // an unusable Finish is answered with an error text
  }
}

async function main() {
  const task = await readTask();
  const messages = [
    { role: "system", content: task.system_prompt || SYSTEM },
    { role: "user", content: task.query },
  ];
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const message = await complete(messages, task.tools);
    messages.push(message);
    if (!message.tool_calls || message.tool_calls.length === 0) {
      console.log(JSON.stringify({ answer: message.content || "" }));
      return;
    }
    for (const call of message.tool_calls) {
      const { text } = await post(`${process.env.SANDBOX_TOOLS_URL}/call`, {
        name: call.function.name,
        arguments: call.function.arguments,
        id: call.id,
      });
      if (call.function.name === "Finish" && accepted(text)) return;
      messages.push({ role: "tool", tool_call_id: call.id, content: text });
    }
  }
  console.log(JSON.stringify({ give_up: true, reason: `no answer after ${MAX_TURNS} turns` }));
}

main().catch((error) => {
  console.error(error.stack || String(error));
  process.exit(1);
});
