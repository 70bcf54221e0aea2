// Every Locale operation through the web SDK 27: node locale.mjs <endpoint> <projectId>
import { Client, Locale } from "appwrite";

const [endpoint, project] = process.argv.slice(2);
const client = new Client().setEndpoint(endpoint).setProject(project);
const locale = new Locale(client);
const countries = await locale.listCountries();
const german = await new Locale(new Client().setEndpoint(endpoint).setProject(project).setLocale("de")).listCountries();
const phones = await locale.listCountriesPhones();
console.log(JSON.stringify({
  get: await locale.get(),
  codes: (await locale.listCodes()).total,
  countries: countries.total,
  eu: (await locale.listCountriesEU()).total,
  continents: (await locale.listContinents()).total,
  currencies: (await locale.listCurrencies()).total,
  languages: (await locale.listLanguages()).total,
  de: german.countries.find((c) => c.code === "DE").name,
  phone: phones.phones.find((p) => p.countryCode === "DE").code,
}));
