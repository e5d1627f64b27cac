/**
 * How many connections each listener may hold, so that all of them together stay below the
 * process's descriptor limit (`ulimit -n`; Node raises the soft limit to the hard one at start) with
 * room kept for what else the server opens: model files, worker threads, sandboxed models' pipes,
 * shared-memory regions, the log. Past the limit accept() fails with EMFILE and every listener
 * drops what arrives, so idle connections on one port would shut out HTTP, health and metrics.
 *
 * HTTP and gRPC have their flags (`--http-max-connections`, `--grpc-max-connections`, 10000 each);
 * the metrics and health listeners, which a few scrapers and probes use, theirs
 * (`--metrics-max-connections`, `--health-max-connections`, 64 each). The small listeners are set
 * aside first, lowered in proportion if they ask for more than half the descriptors left; HTTP and
 * gRPC share the rest, lowered in proportion when they ask for more. The start-up log says so.
 */
import { readFileSync } from 'node:fs';

export const DEFAULT_MAX_CONNECTIONS = 10_000;
/** Connections the metrics listener and the health listener each hold at most by default. */
export const DEFAULT_SMALL_LISTENER_MAX_CONNECTIONS = 64;

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
  /** The metrics listener's and the health listener's caps (0 for a listener that is off). */
  readonly metrics: number;
  readonly health: number;
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
  /** `--metrics-max-connections`, or 0 with `--allow-metrics=false`. */
  readonly metrics: number;
  /** `--health-max-connections`, or 0 without `--health-port`. */
  readonly health: number;
}

const LABELS = {
  http: ['HTTP', '--http-max-connections'],
  grpc: ['gRPC', '--grpc-max-connections'],
  openai: ['OpenAI', '--http-max-connections'],
  metrics: ['metrics', '--metrics-max-connections'],
  health: ['health', '--health-max-connections'],
} as const;
type Listener = keyof typeof LABELS;

type Caps = Partial<Record<Listener, number>>;

const DEFAULTS: Record<Listener, number> = {
  http: DEFAULT_MAX_CONNECTIONS,
  grpc: DEFAULT_MAX_CONNECTIONS,
  openai: DEFAULT_MAX_CONNECTIONS,
  metrics: DEFAULT_SMALL_LISTENER_MAX_CONNECTIONS,
  health: DEFAULT_SMALL_LISTENER_MAX_CONNECTIONS,
};

/** `want` lowered in proportion so that together they fit in `room` (a cap above 0 keeps at least 1). */
function fitted(want: Caps, room: number): Caps {
  const total = Object.values(want).reduce((n, v) => n + v, 0);
  if (total <= room) return want;
  return Object.fromEntries(Object.entries(want).map(([k, v]) => [k, v === 0 ? 0 : Math.max(1, Math.floor((v * room) / total))]));
}

/** The caps that fit below `limit` (as wanted when they do, or when the limit is unknown). */
export function planConnections(wanted: WantedConnections, limit: number | undefined): ConnectionPlan {
  const main: Caps = { http: wanted.http, grpc: wanted.grpc, ...(wanted.openai ? { openai: wanted.openai } : {}) };
  const small: Caps = { metrics: wanted.metrics, health: wanted.health };
  const asPlan = (caps: Caps): ConnectionPlan => ({
    http: caps.http!,
    grpc: caps.grpc!,
    ...(caps.openai ? { openai: caps.openai } : {}),
    metrics: caps.metrics!,
    health: caps.health!,
  });
  if (limit === undefined) return asPlan({ ...main, ...small });
  const reserved = reservedDescriptors(limit);
  // The small listeners first, within half of what is left; HTTP, gRPC and OpenAI share the rest.
  const smallPlan = fitted(small, Math.floor((limit - reserved) / 2));
  const kept = smallPlan.metrics! + smallPlan.health!;
  const caps = { ...fitted(main, Math.max(Object.keys(main).length, limit - reserved - kept)), ...smallPlan };
  const want: Caps = { ...main, ...small };
  const lowered = (Object.keys(want) as Listener[]).filter((k) => caps[k] !== want[k]);
  if (lowered.length === 0) return asPlan(caps);
  const shown = (Object.keys(caps) as Listener[]).filter((k) => (k in main && caps[k]! > 0) || lowered.includes(k));
  const serving = shown.map((k) => `${caps[k]} ${LABELS[k][0]}`).join(' and ');
  const flags = shown.map((k) => `${LABELS[k][1]} ${want[k]}`).join(', ');
  return {
    ...asPlan(caps),
    note: {
      warn: lowered.some((k) => want[k] !== DEFAULTS[k]),
      message:
        `serving at most ${serving} connections (${flags}): the process may open ${limit} descriptors (ulimit -n), ` +
        `${reserved + kept} of them kept for models, files, metrics and health; raise the limit to serve more`,
    },
  };
}
