// The process logger: pino on stderr (stdout stays for what a command prints), JSON lines for
// machines, or coloured one-line records for a person at a terminal (ADR 0017).
import { type Logger, pino } from 'pino';
import { PinoPretty } from 'pino-pretty';

export type { Logger };

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `auto`: pretty when stderr is a terminal, JSON otherwise (a pipe, a file, a pod's log). */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogOptions {
  readonly level?: LogLevel;
  readonly format?: LogFormat;
}

export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

export function createLogger(options: LogOptions = {}): Logger {
  const level = options.level ?? DEFAULT_LOG_LEVEL;
  const format = options.format ?? 'auto';
  const pretty = format === 'pretty' || (format === 'auto' && process.stderr.isTTY === true);
  const base = { name: 'nrn-operator' };
  if (!pretty) return pino({ level, base }, pino.destination(2));
  // Synchronous, so that log lines and what the command prints on stdout keep their order in
  // the terminal. Colour follows the terminal (colorette: NO_COLOR, FORCE_COLOR, isTTY).
  const stream = PinoPretty({
    destination: 2,
    sync: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name',
  });
  return pino({ level, base }, stream);
}

/** A logger that drops everything: for tests and embedded use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
