/** `tritium serve --help`: every flag with its default (flags.ts parses them). */
import { MODEL_LIMIT_USAGE } from './model-limit-flags.ts';

export const SERVE_USAGE = `usage: tritium serve --model-repository <dir> [options]

  --model-repository, --model-store <dir>   model repository: a folder, s3://, as:// or gs:// (repeatable)
  --model-control-mode none|poll|explicit   (default none)
  --load-model <name>                       explicit mode: load at start (repeatable, '*' = all)
  --repository-poll-secs <n>                poll mode interval (default 15)
  --repository-cache-dir <dir>              local copies of s3:// as:// gs:// repositories (default: temporary)
  --strict-model-config, --disable-auto-complete-config
  --model-namespacing <bool> (false)        repositories may hold models of the same name; a name held twice is ambiguous to clients
  --exit-on-error <bool> (true)  --strict-readiness <bool> (true)  --exit-timeout-secs <n> (30)
  --model-config-name <name>
  --http-port/--grpc-port/--metrics-port <n> (8000/8001/8002; 0 = any free port)
  --allow-http/--allow-grpc/--allow-metrics <bool> (true)
  --http-address/--grpc-address/--metrics-address <addr> (0.0.0.0)
  --health-port <n>  --health-address <addr>  /v2/health/live and /ready on their own thread (off; answered while the main thread is swamped);
      HTTPS with --http-use-ssl and the restricted 'health' header apply there too, but no client certificate is asked for
      (kubelet's probes cannot present one)
  --openai-port <n>  --openai-address <addr>  the OpenAI routes (/v1/...) on a listener of their own too (off; always on the HTTP port)
      with the HTTP port's TLS (--http-use-ssl, --http-use-ssl-mutual) and --http-max-connections
  --openai-api-key <key> (repeatable)  --openai-api-key-file <path> (a key per line)
                                            the OpenAI routes require 'Authorization: Bearer <key>' (off: no key needed)
  --http-max-input-size <bytes> (64 MB)  --http-max-json-size <bytes> (16 MB)  --max-tensor-elements <n>  --http-max-header-count <n>
  --grpc-max-input-size <bytes> (64 MB)    one gRPC request message, on the wire or inflated (RESOURCE_EXHAUSTED past it)
  --max-buffered-request-size <bytes>       request bytes held at once, HTTP and gRPC together (a quarter of memory;
                                            503 / RESOURCE_EXHAUSTED past it; also --http-max-buffered-body-size)
  --stream-max-queued-size <bytes> (4 MiB)  response bytes queued for one streaming client (ModelStreamInfer,
                                            generate_stream) that has not read them; past it the model's sends wait
  --stream-stall-timeout-secs <n> (60)      a stream held at that bound this long ends (RESOURCE_EXHAUSTED / error event)
  --http-headers-timeout-secs <n> (60)  --http-request-timeout-secs <n> (60)  --http-max-connections <n> (10000)
  --grpc-max-connections <n> (10000)  --grpc-first-request-timeout-secs <n> (10: a connection with no call by then is closed)
  --metrics-max-connections <n> (64)  --health-max-connections <n> (64)  the metrics and health listeners' caps
  --grpc-reflection <bool> (true)  gRPC server reflection v1 and v1alpha (grpcurl, Postman: no proto files needed)
  --grpc-health-max-watches <n> (1000)  grpc.health.v1 Watch streams open at once (RESOURCE_EXHAUSTED past it)
      the caps are lowered, in proportion, to fit below the descriptor limit (ulimit -n) less a quarter kept
  --allow-client-shm <bool> (false)  --allow-model-file-load <bool> (false)
  --model-log-rate <bytes/s> (65536)        per instance: a model's output (stdout, stderr, log calls) logged per second; lines past it dropped, counted
  --strict-sandbox <bool> (false)           a process-isolated model whose sandbox lacks a guarantee on this host fails to load (false: it loads, with a warning)
  --model-type-check error|warn|off (error) a model.ts that does not type-check fails to load (warn: it loads, each error a warning);
                                            a model's tritium.type_check parameter overrides it
  --model-install-dependencies <bool> (false) a model folder with its own package.json and lockfile but no node_modules gets
                                            \`npm ci --omit=dev --ignore-scripts\` at load (it may fetch); false: such a load is refused
  --log-verbose <n>  --log-info/--log-warning/--log-error <bool>  --log-format default|ISO8601  --log-file <path>
  --backend-config <backend>,<key>=<value>
  --metrics-config <setting>=<value>          summary_latencies|histogram_latencies|counter_latencies=<bool>, summary_quantiles=0.5:0.05,0.99:0.001, summary_max_age=<s>
  --cache-config local,size=<bytes>           response cache shared by models with response_cache { enable: true }
  --cache-config redis,<setting>=<value>      the same in Redis, shared by replicas: host=, port= (required), user, password, db,
                                              connect_timeout (1000), socket_timeout (500), pool_size (1), tls_enabled, cert, key,
                                              cacert, cacert_dir, sni, max_entry_bytes (1048576)
  --rate-limit off|execution_count (off)      --rate-limit-resource <name>:<count>[:<device>] (repeatable)
  --trace-config <setting>=<value>            level=OFF|TIMESTAMPS|TENSORS, rate=<n> (1000), count=<n> (-1), mode=triton|opentelemetry
  --trace-config triton,<setting>=<value>     file=<path> (trace JSON; log-frequency=<n> writes <path>.0, .1, ...)
  --trace-config opentelemetry,<setting>=<value>   url=<OTLP/HTTP endpoint>, resource=<key>=<value>, bsp_max_queue_size, bsp_schedule_delay, bsp_max_export_batch_size
  --http-restricted-api <apis>:<header>=<value>   gate categories behind a header (repeatable)
  --grpc-restricted-protocol <protocols>:<key>=<value>   same over gRPC (metadata triton-grpc-protocol-<key>)
      categories: health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging
  --grpc-use-ssl <bool>  --grpc-use-ssl-mutual <bool>  --grpc-server-cert/--grpc-server-key/--grpc-root-cert <pem file>
  --http-use-ssl <bool>  --http-use-ssl-mutual <bool>  --http-server-cert/--http-server-key/--http-root-cert <pem file>
  --grpc-keepalive-time/--grpc-keepalive-timeout/--grpc-max-connection-age/--grpc-max-connection-age-grace <ms>
  --id <name>                                 the server's name in server metadata (triton)
  --model-load-retry-count <n>                a failed model load is tried again n times (0)
${MODEL_LIMIT_USAGE}  --http-header-forward-pattern/--grpc-header-forward-pattern <regex>   matching headers become request parameters
  Triton's other flags (--http-thread-count, --pinned-memory-pool-byte-size, --backend-directory, ...) are
  accepted and checked, and a warning names each one given: they change nothing here.
`;
