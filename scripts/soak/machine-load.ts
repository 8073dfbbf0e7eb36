import { availableParallelism, cpus, loadavg } from "node:os";
import { machineCpuSeconds } from "../../bench/processes.js";
import { fixed } from "./report.js";

/**
 * Watches the machine from now on: its load average and the CPU it spent, so that the report can
 * tell the gateway's and the soak's share from other work running on the same machine.
 */
export function watchMachine() {
  const startedAt = performance.now();
  const busyAtStart = machineCpuSeconds()?.busy;
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  return {
    /** One line: cores, Node, load averages and core-seconds by who spent them, up to now. */
    line(gatewaySeconds: number): string {
      const wallSeconds = (performance.now() - startedAt) / 1000;
      const busyAtEnd = machineCpuSeconds()?.busy;
      const busy = busyAtStart !== undefined && busyAtEnd !== undefined ? busyAtEnd - busyAtStart : Number.NaN;
      const soakCpu = process.cpuUsage();
      const soakSeconds = (soakCpu.user + soakCpu.system) / 1e6;
      return (
        `machine: ${availableParallelism()} × ${cpus()[0]?.model.trim() ?? "?"}, Node ${process.version}; ` +
        `load average ${fixed(loadAtStart, 2)} at the start, ${fixed(loadavg()[0] ?? Number.NaN, 2)} at the end; ` +
        `CPU busy ${fixed(busy, 0)} of ${fixed(wallSeconds * availableParallelism(), 0)} core-seconds: gateway ${fixed(gatewaySeconds, 0)}, ` +
        `soak (clients and fake upstream) ${fixed(soakSeconds, 0)}, everything else ${fixed(busy - gatewaySeconds - soakSeconds, 0)}`
      );
    },
  };
}
