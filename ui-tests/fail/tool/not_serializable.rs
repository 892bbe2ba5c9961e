use hookchain::tool;

struct Forecast {
    degrees: i32,
}

/// Gets the forecast.
#[tool]
async fn forecast(city: String) -> Forecast {
    let _ = city;
    Forecast { degrees: 21 }
}

fn main() {
    let _ = forecast::call(String::new());
}
