// The driver of scripts/bench-offer.sh: what offering tools costs a warm `halo serve`, the
// goal of issue 29 that needs no peer. Each halo binary given gets a `halo serve` of its own
// (agent.halo, agent.mjs's project: five declarations, 20 methods, W1.read mocked), against one fake
// OpenAI-compatible model (fake-model.mjs); each round runs, binary after binary, --runs runs
// that offer the 20 methods and call none and as many with tools: none, in alternating blocks,
// and prints the median wall time of each, halo serve's processor time per run (/proc, in 10 ms
// ticks: read over many runs) and their ratio.
//
//   node offer.mjs --rounds 3 --runs 300 --fake-model fake-model.mjs NAME=BIN [NAME=BIN...]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf('--' + name);
  return i >= 0 ? argv.splice(i, 2)[1] : def;
};
const rounds = Number(opt('rounds', 3));
const runs = Number(opt('runs', 300));
const fakeScript = opt('fake-model');
const bins = argv.map((a) => {
  const [name, bin] = a.split('=');
  return { name, bin };
});

const children = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));

function firstMatch(child, stream, re) {
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child[stream] }).on('line', (l) => {
      const m = re.exec(l);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`${child.spawnargs.join(' ')} exited with ${code}`)));
  });
}

const fake = spawn(process.execPath, [fakeScript], { stdio: ['ignore', 'pipe', 'inherit'] });
children.push(fake);
const fakeURL = await firstMatch(fake, 'stdout', /^(http:\S+)/);

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
function postJSON(url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: keepAlive, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function serve(bin) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'halo-bench-offer-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  fs.copyFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'agent.halo'), path.join(dir, 'flow.halo'));
  fs.mkdirSync(path.join(dir, 'src'));
  fs.mkdirSync(path.join(dir, 'docs'));
  fs.writeFileSync(path.join(dir, 'mocks.json'), JSON.stringify({ 'W1.read': 'x'.repeat(16 << 10) }));
  const p = spawn(bin, ['serve', '--addr', '127.0.0.1:0', '--mocks', 'mocks.json', 'flow.halo'], {
    cwd: dir, stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fakeURL + '/v1', NO_COLOR: '1' },
  });
  children.push(p);
  const url = await firstMatch(p, 'stderr', /listening: url=(http:\S+)/);
  p.stderr.resume();
  return { pid: p.pid, url };
}

async function run(url, pipeline) {
  const r = await postJSON(url + '/api/runs?wait=60s', JSON.stringify({ pipeline, inputs: { task: 'the date tests' } }));
  if (r.status !== 200 || JSON.parse(r.body).status !== 'completed') throw new Error(`${pipeline}: ${r.status} ${r.body.slice(0, 300)}`);
}

function ticksMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

const middle = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// measure runs --runs runs of each pipeline on s in alternating blocks of 50 (so that what the
// server does more of as runs pile up, such as its run store growing, falls on both alike) and
// returns each pipeline's median wall time and processor time per run.
const BLOCK = 50;
async function measure(s, pipelines) {
  const out = Object.fromEntries(pipelines.map((p) => [p, { walls: [], ticks: 0 }]));
  for (let done = 0; done < runs; done += BLOCK) {
    for (const p of pipelines) {
      const c0 = ticksMs(s.pid);
      for (let i = done; i < Math.min(done + BLOCK, runs); i++) {
        const t = performance.now();
        await run(s.url, p);
        out[p].walls.push(performance.now() - t);
      }
      out[p].ticks += ticksMs(s.pid) - c0;
    }
  }
  return Object.fromEntries(pipelines.map((p) => [p, { wall: middle(out[p].walls), cpu: out[p].ticks / runs }]));
}

for (const b of bins) Object.assign(b, await serve(b.bin));
for (const b of bins) {
  for (let i = 0; i < 50; i++) {
    await run(b.url, 'Offer');
    await run(b.url, 'Bare');
  }
}
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`load before: ${load()}`);
const ratios = Object.fromEntries(bins.map((b) => [b.name, []]));
for (let r = 1; r <= rounds; r++) {
  for (const b of bins) {
    const { Offer: offer, Bare: bare } = await measure(b, ['Offer', 'Bare']);
    ratios[b.name].push(offer.wall / bare.wall);
    console.log(`round ${r} ${b.name}: offer ${offer.wall.toFixed(3)} ms (processor ${offer.cpu.toFixed(2)} ms), tools: none ${bare.wall.toFixed(3)} ms (${bare.cpu.toFixed(2)} ms); wall ratio ${(offer.wall / bare.wall).toFixed(2)} (goal ≤ 1.3)`);
  }
}
console.log(`load after: ${load()}`);
for (const b of bins) {
  const s = [...ratios[b.name]].sort((x, y) => x - y);
  console.log(`${b.name}: offer / tools: none, min / median / max of the rounds: ${s[0].toFixed(2)} / ${middle(s).toFixed(2)} / ${s[s.length - 1].toFixed(2)}`);
}
process.exit(0);
