/** A webhook receiver for the notification tests. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventBody } from '../../src/store/outbox.ts';

/** A webhook receiver on a fixed loopback port that can go down (port closed) and come back. */
export class Receiver {
  readonly events: EventBody[] = [];
  port = 0;
  #server: Server | null = null;
  /** Answer nothing (hold the request) instead of 200. */
  hang = false;
  /** Answer 422 to the events this picks (a receiver that refuses one payload). */
  refuse: (e: EventBody) => boolean = () => false;

  async up(): Promise<void> {
    if (this.#server) return;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (this.hang) return;
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as EventBody;
        if (this.refuse(event)) {
          res.writeHead(422).end('no');
          return;
        }
        this.events.push(event);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook?token=secret-part`;
  }
}
