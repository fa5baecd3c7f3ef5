import type { Metadata } from "next";
import { Integrations } from "./integrations";

export const metadata: Metadata = { title: "Integrações" };

export default function IntegrationsPage() {
  return <Integrations />;
}
