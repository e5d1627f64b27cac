/**
 * A child process of idle-grpc-connections.ts: opens `count` connections to 127.0.0.1:`port`, each
 * sending the HTTP/2 client preface and an empty SETTINGS frame and nothing more, and reports to its
 * parent how many connected and how many the server closed. Closes them all on 'close'. A process of
 * its own so that the attack's sockets do not count against the bench's descriptor limit.
 */
import net from 'node:net';

const [port, count] = process.argv.slice(2).map(Number) as [number, number];
const PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);
const sockets: net.Socket[] = [];
let connected = 0;
let closedByServer = 0;
let failed = 0;
let closing = false;

for (let i = 0; i < count; i++) {
  const s = net.connect(port, '127.0.0.1');
  let opened = false;
  s.on('error', () => undefined);
  s.once('connect', () => {
    opened = true;
    connected++;
    s.write(PREFACE);
  });
  s.once('close', () => {
    if (closing) return;
    if (opened) closedByServer++;
    else failed++;
  });
  sockets.push(s);
}

const report = (): void => void process.send!({ connected, closedByServer, failed });
const timer = setInterval(report, 200);
process.on('message', (m) => {
  if (m !== 'close') return;
  closing = true;
  clearInterval(timer);
  report();
  for (const s of sockets) s.destroy();
  process.disconnect();
});
