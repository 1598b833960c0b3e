// A fake OpenAI-compatible model for scripts/bench-agent.sh: POST /v1/chat/completions
// answers at once. The model id says how many steps a conversation takes: model "sN" asks for
// one tool call (W1__read) while the request carries fewer than N tool results, then answers
// "done". It reads every body (counting `"role":"tool"` with a byte search, not parsing it),
// as a model server does, so each client pays for sending what it sends. It keeps the bodies
// of the last conversation (GET /last) and the tools of the last request (GET /tools) for
// the driver. It prints its URL on stdout.
import http from 'node:http';

let last = [];
let lastTools = null;
const toolMark = Buffer.from('"role":"tool"');

function count(buf, mark) {
  let n = 0;
  for (let i = buf.indexOf(mark); i >= 0; i = buf.indexOf(mark, i + 1)) n++;
  return n;
}

function reply(steps, done, n) {
  const message = done
    ? { role: 'assistant', content: 'done' }
    : { role: 'assistant', content: null, tool_calls: [{ id: 'call_' + n, type: 'function', function: { name: 'W1__read', arguments: '{"path":"src/date.ts"}' } }] };
  return JSON.stringify({
    id: 'chatcmpl-bench', object: 'chat.completion', created: 1, model: 's' + steps,
    choices: [{ index: 0, message, finish_reason: done ? 'stop' : 'tool_calls' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/last') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(last.map((b) => b.toString())));
    return;
  }
  if (req.method === 'GET' && req.url === '/tools') {
    res.setHeader('content-type', 'application/json');
    res.end(lastTools ?? 'null');
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const head = body.subarray(0, 200).toString();
    const m = /"model":"s(\d+)"/.exec(head);
    const steps = m ? Number(m[1]) : 0;
    const results = count(body, toolMark);
    if (results === 0) last = [];
    last.push(body);
    if (lastTools === null && results === 0) {
      try {
        const t = JSON.parse(body).tools;
        if (t) lastTools = JSON.stringify(t);
      } catch {}
    }
    res.setHeader('content-type', 'application/json');
    res.end(reply(steps, results >= steps, results));
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}`);
});
