import type { Metadata } from "next";
import { Blocklist } from "./blocklist";

export const metadata: Metadata = { title: "Números bloqueados" };

export default function BlocklistPage() {
  return <Blocklist />;
}
