// Starts a server of this folder with every listening socket bound to
// 127.0.0.1 (the reference servers listen on all interfaces by default).
// usage: node loopback.mjs <module path> [args...]
import net from "node:net";
import { pathToFileURL } from "node:url";
import path from "node:path";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  // listen(port[, host][, backlog][, cb]) or listen({port, host, ...}[, cb])
  if (typeof args[0] === "object" && args[0] !== null) args[0] = { ...args[0], host: "127.0.0.1" };
  else if (typeof args[0] === "number" || typeof args[0] === "string") {
    if (typeof args[1] === "string") args[1] = "127.0.0.1";
    else args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
const [, , module, ...rest] = process.argv;
process.argv = [process.argv[0], module, ...rest];
await import(pathToFileURL(path.resolve(module)).href);
