// Runs a node program with every TCP socket it listens on bound to 127.0.0.1
// (the reference servers and the conformance suite's test servers listen on
// all interfaces by default).
// usage: node loopback.mjs <module path> [args...]
import net from "node:net";
import { pathToFileURL } from "node:url";
import path from "node:path";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  // listen(port[, host][, backlog][, cb]) or listen({port, host, ...}[, cb]);
  // a path (a unix socket) or a handle is left alone.
  const options = typeof args[0] === "object" && args[0] !== null && !("fd" in args[0]) && !args[0]._handle ? args[0] : null;
  const port = options ? options.port : args[0];
  if (port === undefined || typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port))) {
    // The socket is bound here, synchronously: a listen given a host binds
    // later, and servers that read address() right after listen() (the
    // conformance suite's do) would find none.
    const { TCP, constants } = process.binding("tcp_wrap");
    const handle = new TCP(constants.SERVER);
    const err = handle.bind("127.0.0.1", Number(port ?? 0));
    if (err) throw new Error(`cannot bind 127.0.0.1:${port} (error ${err})`);
    return listen.call(this, handle, args.find((a) => typeof a === "function"));
  }
  return listen.apply(this, args);
};
const [, , module, ...rest] = process.argv;
process.argv = [process.argv[0], module, ...rest];
await import(pathToFileURL(path.resolve(module)).href);
