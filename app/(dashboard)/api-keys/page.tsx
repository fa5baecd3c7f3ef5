import type { Metadata } from "next";
import { ApiKeys } from "./api-keys";

export const metadata: Metadata = { title: "Chaves de API" };

export default function ApiKeysPage() {
  return <ApiKeys />;
}
