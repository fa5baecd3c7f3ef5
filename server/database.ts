import { getDatabase, openedDatabase, type Database, type Db } from "../db/client";
import { env } from "./env";

/**
 * The process-wide database with the server's configuration (DATABASE_URL, else PGlite under DATA_DIR). Once
 * open, the configuration is not read again (each read of process.env is a call into the runtime; the join link
 * asks on every visit).
 */
export function serverDatabase(): Promise<Database> {
  return openedDatabase() ?? getDatabase({ url: env.databaseUrl, dataDir: env.dataDir, statementLog: env.statementLog, poolSize: env.databasePoolSize });
}

export async function serverDb(): Promise<Db> {
  return (await serverDatabase()).db;
}
