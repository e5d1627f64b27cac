// Runs INSIDE the Tritium container (podman exec -i <name> node --input-type=module - <mode>):
// the image's own Node talks to its own server, so the answer comes from inside the container.
//   infer  one request to sentiment_ensemble, prints the logits
//   simple one request to Triton's `simple` (a mounted examples/model_repository), prints OUTPUT0/1
//   drain  requests queued in the server, then SIGTERM to PID 1 (tini, which forwards it to
//          tritium serve); prints what happened to them and to a request sent after the signal
const base = 'http://127.0.0.1:8000';
const mode = process.argv[2] ?? 'infer';

async function infer(sentences) {
  const body = {
    inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [sentences.length, 1], data: sentences }],
  };
  const res = await fetch(`${base}/v2/models/sentiment_ensemble/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

const SENTENCES = ['This is a fantastic technical article.', 'I am not impressed with the performance.'];

if (mode === 'infer') {
  const started = performance.now();
  const { status, body } = await infer(SENTENCES);
  const ms = (performance.now() - started).toFixed(1);
  console.log(`POST /v2/models/sentiment_ensemble/infer -> ${status} in ${ms} ms`);
  console.log(JSON.stringify(body));
  const logits = body?.outputs?.[0]?.data;
  const ok = status === 200 && logits?.length === 4 && logits[1] > logits[0] && logits[2] > logits[3];
  console.log(ok ? 'first sentence positive, second negative' : 'UNEXPECTED ANSWER');
  process.exit(ok ? 0 : 1);
}

if (mode === 'simple') {
  const a = Array.from({ length: 16 }, (_, i) => i);
  const b = Array.from({ length: 16 }, () => 1);
  const res = await fetch(`${base}/v2/models/simple/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
      ],
    }),
  });
  const body = await res.json();
  const out = Object.fromEntries((body.outputs ?? []).map((o) => [o.name, o.data]));
  console.log(`POST /v2/models/simple/infer -> ${res.status}: OUTPUT0 ${JSON.stringify(out.OUTPUT0)} OUTPUT1 ${JSON.stringify(out.OUTPUT1)}`);
  const ok = res.status === 200 && a.every((x, i) => out.OUTPUT0?.[i] === x + 1 && out.OUTPUT1?.[i] === x - 1);
  process.exit(ok ? 0 : 1);
}

if (mode === 'drain') {
  // The server's own count of what it has accepted: the ensemble's queue (Triton's pending gauge)
  // and its finished requests. The signal is sent once requests wait in that queue, so they are
  // in flight by the server's account, not merely sent.
  const metric = async (name) => {
    const text = await (await fetch('http://127.0.0.1:8002/metrics')).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{model="sentiment_ensemble",`));
    return Number(line?.split(' ').pop() ?? 0);
  };
  const doneBefore = await metric('nv_inference_request_success');
  const batch = Array.from({ length: 256 }, (_, i) => SENTENCES[i % 2]);
  const t0 = performance.now();
  // Each line is printed as it happens: the container (and this process) ends when the server exits.
  const inflight = Array.from({ length: 8 }, (_, i) =>
    infer(batch)
      .then(
        (r) => ({ status: r.status, at: performance.now() - t0 }),
        (e) => ({ status: `error ${e.cause?.code ?? e.message}`, at: performance.now() - t0 }),
      )
      .then((r) => (console.log(`  request ${i}: ${r.status} at ${r.at.toFixed(0)} ms`), r)),
  );
  let pending = 0;
  while (pending < 4 && performance.now() - t0 < 30_000) {
    pending = await metric('nv_inference_pending_request_count');
    if (pending < 4) await new Promise((r) => setTimeout(r, 10));
  }
  const done = (await metric('nv_inference_request_success')) - doneBefore;
  const signalAt = performance.now() - t0;
  process.kill(1, 'SIGTERM');
  console.log(`SIGTERM to PID 1 at ${signalAt.toFixed(0)} ms: 8 requests of 256 sentences sent, ${pending} waiting in the server's queue, ${done} done`);
  await new Promise((r) => setTimeout(r, 200));
  const late = await infer(SENTENCES).then(
    (r) => `${r.status} ${JSON.stringify(r.body)}`,
    (e) => `refused (${e.cause?.code ?? e.message})`,
  );
  console.log(`a request sent 200 ms after the signal: ${late}`);
  const results = await Promise.all(inflight);
  const ok = results.filter((r) => r.status === 200);
  const afterSignal = ok.filter((r) => r.at > signalAt);
  console.log(`${ok.length}/8 answered 200, ${afterSignal.length} of them after the signal (at least the ${pending} queued must)`);
  const drained = afterSignal.length >= pending && pending > 0 && late.startsWith('503');
  console.log(drained ? 'DRAIN OK' : 'DRAIN FAILED');
  process.exit(drained ? 0 : 1);
}

console.error(`unknown mode ${mode}`);
process.exit(2);
