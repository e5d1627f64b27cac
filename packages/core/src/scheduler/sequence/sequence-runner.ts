import { InferError } from '../../errors.ts';
import type { ExecuteContext, ExecuteOutput } from '../../backend/spi.ts';
import type { InferResponse } from '../../types.ts';
import type { BatchAnswers } from '../batch-answers.ts';
import { executionContext } from '../call-cycles.ts';
import { Execution } from '../execution.ts';
import type { ImplicitState } from './implicit-state.ts';
import type { Entry, Row, Runner } from './sequence-entry.ts';

export interface SequenceRunDeps {
  readonly answers: BatchAnswers<Entry>;
  readonly decoupled: boolean;
  /** The model's implicit state: each response's state outputs are absorbed into its sequence's. */
  readonly state: ImplicitState;
  /** The batch was answered and the instance is free again. */
  readonly done: () => void;
}

/**
 * Runs one batch of a sequence model on `runner`'s instance and answers each request (a filler row's
 * result is discarded). A failed execution fails its requests: a stateful request is never re-run.
 */
export function runSequenceBatch(runner: Runner, rows: readonly Row[], now: number, deps: SequenceRunDeps): void {
  const entries = rows.flatMap((r) => (r.entry ? [r.entry] : []));
  const running = new Execution(entries, false);
  for (const e of entries) {
    e.state = 'running';
    e.running = running;
    e.where = undefined;
    e.responseStartUs = now;
    deps.answers.dequeued(e, now);
  }
  runner.busy = true;
  const context = executionContext(runner.context, entries.map((e) => e.request));
  const run = deps.decoupled ? runDecoupled(runner, rows, running.signal, context, now, deps) : runBatch(runner, rows, entries, running.signal, context, now, deps);
  run
    .catch((err: unknown) => deps.answers.internalError(entries, err))
    .finally(() => {
      runner.busy = false;
      deps.done();
    });
}

async function runBatch(
  runner: Runner,
  rows: readonly Row[],
  entries: readonly Entry[],
  signal: AbortSignal,
  context: ExecuteContext,
  startUs: number,
  { answers, state }: SequenceRunDeps,
): Promise<void> {
  let output: ExecuteOutput;
  try {
    output = await runner.instance.execute(
      rows.map((r) => r.request),
      signal,
      context,
    );
  } catch (err) {
    answers.executed(entries, rows.length, startUs);
    answers.failAll(entries, InferError.from(err), 'BACKEND');
    return;
  }
  const timings = answers.executed(entries, rows.length, startUs, output?.timings);
  answers.answerEach(
    rows.map((r) => r.entry),
    output,
    (e, result) => {
      let response: InferResponse;
      try {
        response = e.values ? state.absorb(e.values, result, e.request.outputs) : result;
      } catch (err) {
        answers.finish(e, InferError.from(err), 'BACKEND');
        return;
      }
      answers.finish(e, response, undefined, timings);
    },
  );
}

function runDecoupled(runner: Runner, rows: readonly Row[], signal: AbortSignal, context: ExecuteContext, startUs: number, { answers }: SequenceRunDeps): Promise<void> {
  return answers.runDecoupled(
    runner.instance,
    rows.map((r) => r.entry),
    rows.map((r) => r.request),
    { signal, context, startUs, batchSize: rows.length },
    (ran, error) => answers.failAll(ran, error, 'BACKEND'),
  );
}
