/**
 * How many connections each listener may hold, so that all of them together stay below the
 * process's descriptor limit (`ulimit -n`; Node raises the soft limit to the hard one at start) with
 * room kept for what else the server opens: model files, worker threads, sandboxed models' pipes,
 * shared-memory regions, the log. Past the limit accept() fails with EMFILE and every listener
 * drops what arrives, so idle connections on one port would shut out HTTP, health and metrics.
 *
 * HTTP and gRPC have their flags (`--http-max-connections`, `--grpc-max-connections`, 10000 each);
 * the metrics and health listeners, which a few scrapers and probes use, hold at most
 * SMALL_LISTENER_MAX_CONNECTIONS each. When the flags ask for more than the descriptors left, both
 * are lowered in proportion to fit, and the start-up log says so.
 */
import { readFileSync } from 'node:fs';

export const DEFAULT_MAX_CONNECTIONS = 10_000;
/** Connections the metrics listener and the health listener each hold at most. */
export const SMALL_LISTENER_MAX_CONNECTIONS = 64;

/** The process's open-file limit (its soft limit, which Node has raised to the hard one); undefined where /proc is not there. */
export function descriptorLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/** Descriptors kept for everything but client connections: a quarter of the limit, at least 256. */
export function reservedDescriptors(limit: number): number {
  return Math.max(256, Math.floor(limit / 4));
}

export interface ConnectionPlan {
  readonly http: number;
  readonly grpc: number;
  /** The OpenAI routes' own listener (`--openai-port`), when there is one; it takes `--http-max-connections`. */
  readonly openai?: number;
  /** Set when the flags were lowered to fit: the start-up line saying so, and whether a flag was given (then a warning). */
  readonly note?: { readonly message: string; readonly warn: boolean };
}

export interface WantedConnections {
  /** `--http-max-connections`, or 0 with `--allow-http=false`. */
  readonly http: number;
  /** `--grpc-max-connections`, or 0 with `--allow-grpc=false`. */
  readonly grpc: number;
  /** `--http-max-connections` again for `--openai-port`'s listener; 0 or absent without one. */
  readonly openai?: number;
}

const LABELS = { http: ['HTTP', '--http-max-connections'], grpc: ['gRPC', '--grpc-max-connections'], openai: ['OpenAI', '--http-max-connections'] } as const;

/** The caps that fit below `limit` (as wanted when they do, or when the limit is unknown). */
export function planConnections(wanted: WantedConnections, limit: number | undefined): ConnectionPlan {
  const keys: (keyof typeof LABELS)[] = wanted.openai ? ['http', 'grpc', 'openai'] : ['http', 'grpc'];
  const as = (f: (k: keyof typeof LABELS) => number): ConnectionPlan => ({ http: f('http'), grpc: f('grpc'), ...(wanted.openai ? { openai: f('openai') } : {}) });
  const want = (k: keyof typeof LABELS): number => wanted[k] ?? 0;
  if (limit === undefined) return as(want);
  const reserved = reservedDescriptors(limit);
  const room = Math.max(keys.length, limit - reserved - 2 * SMALL_LISTENER_MAX_CONNECTIONS);
  const total = keys.reduce((n, k) => n + want(k), 0);
  if (total <= room) return as(want);
  const plan = as((k) => (want(k) === 0 ? 0 : Math.max(1, Math.floor((want(k) * room) / total))));
  const given = keys.some((k) => want(k) !== 0 && want(k) !== DEFAULT_MAX_CONNECTIONS);
  const served = keys.filter((k) => (plan[k] ?? 0) > 0);
  const serving = served.map((k) => `${plan[k]} ${LABELS[k][0]}`).join(' and ');
  const flags = served.map((k) => `${LABELS[k][1]} ${want(k)}`).join(', ');
  return {
    ...plan,
    note: {
      warn: given,
      message:
        `serving at most ${serving} connections (${flags}): the process may open ${limit} descriptors (ulimit -n), ` +
        `${reserved + 2 * SMALL_LISTENER_MAX_CONNECTIONS} of them kept for models, files, metrics and health; raise the limit to serve more`,
    },
  };
}
