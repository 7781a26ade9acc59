/**
 * The live page's event stream skips ticks a client has not taken: a tab that stops reading must
 * not make the server (a worker, with `--metrics-port`) queue every tick's snapshot in memory.
 * Real HTTP on loopback; the client's socket is paused, so the kernel's buffers fill and then the
 * server's.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { eventSender } from '../../src/dashboard/server.ts';

let server: Server | null = null;
let client: Socket | null = null;

afterEach(async () => {
  client?.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

describe('the event stream under a client that stops reading', () => {
  it('holds at most one snapshot beyond the high-water mark, however many ticks come', async () => {
    const snapshot = JSON.stringify({ slices: 'x'.repeat(400_000) });
    let response: ServerResponse | null = null;
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      response = res;
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = connect(port, '127.0.0.1');
    client.write('GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // The tab stops reading: nothing more is taken off the socket.
    client.pause();
    for (let i = 0; i < 100 && response === null; i++) await new Promise((r) => setTimeout(r, 10));
    const res = response as unknown as ServerResponse;
    const send = eventSender(res);
    // Sixty ticks, ~24 MB of snapshots: the kernel's loopback buffers hold a few MB at most.
    for (let tick = 0; tick < 60; tick++) {
      send(snapshot);
      await new Promise((r) => setImmediate(r));
    }
    expect(res.writableLength).toBeLessThan(2 * snapshot.length + 1024);
  });
});
