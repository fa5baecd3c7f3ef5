import { getDatabase, type Database, type Db } from "../db/client";
import { env } from "./env";

/** The process-wide database with the server's configuration (DATABASE_URL, else PGlite under DATA_DIR). */
export function serverDatabase(): Promise<Database> {
  return getDatabase({ url: env.databaseUrl, dataDir: env.dataDir, statementLog: env.statementLog, poolSize: env.databasePoolSize });
}

export async function serverDb(): Promise<Db> {
  return (await serverDatabase()).db;
}
