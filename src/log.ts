// The process logger: pino, JSON lines on stderr (stdout stays for what a command prints).
import { type Logger, pino } from 'pino';

export type { Logger };

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { name: 'nrn-operator' } }, pino.destination(2));
}

/** A logger that drops everything: for tests and embedded use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
