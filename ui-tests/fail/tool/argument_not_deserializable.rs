use hookchain::tool;

struct City(String);

/// Gets the weather.
#[tool]
async fn weather(city: City, days: u8) -> String {
    format!("{} in {days} days", city.0)
}

fn main() {}
