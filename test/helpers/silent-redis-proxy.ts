/**
 * A loopback TCP proxy in front of Redis that can go silent: every connection stays open but
 * nothing passes either way, as with a blackholed host, a SIGSTOPped server or a network
 * partition. The client's connection stays `ready` while its commands go unanswered, which a
 * killed Redis (connection refused, `reconnecting`) never shows. The shared Redis behind it is
 * never touched.
 */
import net from 'node:net';

export class SilentRedisProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #silent = false;
  #port = 0;

  constructor(target: URL) {
    this.#server = net.createServer((client) => {
      this.#track(client);
      // A connection opened while silent is accepted and then hears nothing, like the rest.
      if (this.#silent) {
        client.on('data', () => undefined);
        return;
      }
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      this.#track(upstream);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        from.on('data', (chunk) => {
          if (!this.#silent) to.write(chunk);
        });
        from.on('close', () => to.destroy());
      }
    });
  }

  #track(socket: net.Socket): void {
    this.#sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.#sockets.delete(socket));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#port = (this.#server.address() as net.AddressInfo).port;
    return this.url;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.#port}`;
  }

  /** From now on nothing passes either way; no connection is closed. */
  silence(): void {
    this.#silent = true;
  }

  /** Closes every connection (what went silent lost its bytes) and forwards new ones again. */
  restore(): void {
    this.#silent = false;
    for (const socket of this.#sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
