/**
 * BLS cycle guard of one scheduler. Each execution slot (an instance's one batch in flight) has a
 * CallFrame; an execution's calls back into the server (BLS) carry the frames of every slot held
 * while they wait (`InferRequest.callers`). A call into this scheduler whose callers hold some of
 * its slots can only run on the others; when every slot is held by an execution waiting on calls
 * into this scheduler (this call's chain, or another pending call's: two instances each calling
 * their own model), nothing can ever free one, so the call is refused at once with UNAVAILABLE
 * naming the chain, instead of hanging (Triton's python backend only warns that such calls can
 * deadlock).
 */
import { InferError } from '../errors.ts';
import type { ExecuteContext } from '../backend/spi.ts';
import type { CallFrame, InferRequest } from '../types.ts';

let nextFrameId = 1;

/** A new frame for `model`: one per execution slot, or a per-step ensemble's (which holds no slot, and only names the chain). */
export function newCallFrame(model: string): CallFrame {
  return { model, id: nextFrameId++ };
}

export class CallCycleGuard {
  /** One frame per slot, in slot order. */
  readonly frames: readonly CallFrame[];
  private readonly own: ReadonlySet<CallFrame>;
  /** Own slots whose executions wait on calls queued or running here, with how many such calls. */
  private readonly waiting = new Map<CallFrame, number>();

  constructor(
    private readonly model: string,
    slotCount: number,
  ) {
    this.frames = Array.from({ length: slotCount }, () => newCallFrame(model));
    this.own = new Set(this.frames);
  }

  /**
   * Checks a request before it is queued. Returns the own slots its callers hold (to `release`
   * once it is answered), or undefined when it holds none; throws UNAVAILABLE when the call would
   * wait forever.
   */
  admit(request: InferRequest): CallFrame[] | undefined {
    const callers = request.callers;
    if (!callers || callers.length === 0) return undefined;
    const held = callers.filter((f) => this.own.has(f));
    if (held.length === 0) return undefined;
    const blocked = new Set<CallFrame>([...this.waiting.keys(), ...held]);
    if (blocked.size >= this.frames.length) {
      const chain = [...callers.map((f) => f.model), this.model].join(' -> ');
      const n = this.frames.length;
      throw new InferError(
        'UNAVAILABLE',
        `BLS call cycle: ${chain}: all ${n} instance(s) of model '${this.model}' are held by executions waiting on calls into it ` +
          `(this call's own callers among them), so the call could never run; add instances (instance_group count) or break the cycle`,
      );
    }
    for (const f of held) this.waiting.set(f, (this.waiting.get(f) ?? 0) + 1);
    return held;
  }

  /** The call registered by `admit` was answered. */
  release(held: readonly CallFrame[]): void {
    for (const f of held) {
      const n = (this.waiting.get(f) ?? 0) - 1;
      if (n > 0) this.waiting.set(f, n);
      else this.waiting.delete(f);
    }
  }
}

/**
 * The callers of an execution on slot `own` of `requests`: every caller of each request (they all
 * wait on this execution), then `own`. Allocates only when some request has callers.
 */
export function executionCallers(requests: readonly InferRequest[], own: readonly CallFrame[]): readonly CallFrame[] {
  let out: CallFrame[] | undefined;
  for (const r of requests) {
    if (!r.callers || r.callers.length === 0) continue;
    out ??= [];
    for (const f of r.callers) if (!out.includes(f)) out.push(f);
  }
  if (!out) return own;
  for (const f of own) if (!out.includes(f)) out.push(f);
  return out;
}

/**
 * The context of an execution of `requests` on a slot whose own context is `slot`: the slot's
 * (shared, no allocation) unless a request has callers or the execution is a crash retry.
 */
export function executionContext(slot: ExecuteContext, requests: readonly InferRequest[], crashRetry = false): ExecuteContext {
  if (!crashRetry && !requests.some((r) => r.callers && r.callers.length > 0)) return slot;
  const callers = executionCallers(requests, slot.callers);
  return crashRetry ? { callers, crashRetry } : { callers };
}
