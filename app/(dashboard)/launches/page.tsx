import type { Metadata } from "next";
import { Launches } from "./launches";

export const metadata: Metadata = { title: "Lançamentos" };

export default function LaunchesPage() {
  return <Launches />;
}
